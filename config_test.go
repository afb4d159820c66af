package leasehold_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/lease"
)

// TestTimingBelowTheStoresResolutionIsRefused (issue 17, defect 14): a
// world timing whose term the store cannot hold (5ns stores as 0 µs, and
// the expiry sweep then never plans the world) used to validate because
// every field was positive and the relations held. It is refused now,
// naming the field, and matches ErrInvalid like every configuration error.
func TestTimingBelowTheStoresResolutionIsRefused(t *testing.T) {
	t.Parallel()
	tiny := lease.Timing{Lease: 5, Renew: 1, Drain: 1, Stop: 3, Skew: 1, Poll: 1, Margin: 1}
	err := leasehold.Config{WorldTiming: tiny}.Validate()
	require.ErrorIs(t, err, leasehold.ErrInvalidTiming)
	require.ErrorIs(t, err, leasehold.ErrInvalid)
	require.ErrorContains(t, err, "T_lease (5ns) must be >= 1ms")

	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db")})
	require.NoError(t, err)
	_, err = leasehold.NewClient(ctx, d, leasehold.Config{WorldTiming: tiny})
	require.ErrorIs(t, err, leasehold.ErrInvalid)

	ms := lease.Timing{Lease: 30 * time.Millisecond, Renew: time.Millisecond, Drain: time.Millisecond,
		Stop: 10 * time.Millisecond, Skew: 5 * time.Millisecond, Poll: time.Millisecond, Margin: time.Millisecond}
	require.NoError(t, leasehold.Config{WorldTiming: ms}.Validate(), "a millisecond timing is the stated minimum")
}

// TestConfigErrorsMatchErrInvalid (issue 17, defect 10): every
// configuration a caller got wrong matches ErrInvalid — a timing, an
// effect's declared duration — besides its own sentinel, which the root
// exports.
func TestConfigErrorsMatchErrInvalid(t *testing.T) {
	t.Parallel()
	err := leasehold.Config{WorldTiming: lease.Timing{Stop: time.Minute}}.Validate()
	require.ErrorIs(t, err, leasehold.ErrInvalidTiming)
	require.ErrorIs(t, err, leasehold.ErrInvalid)
	for _, d := range []time.Duration{0, -1, 1<<63 - 1} {
		err := lease.RunDefaults().CheckEffect(d)
		require.ErrorIs(t, err, leasehold.ErrEffectDuration, "%v", d)
		require.ErrorIs(t, err, leasehold.ErrInvalid, "%v", d)
	}
}
