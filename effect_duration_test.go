package leasehold_test

// Issue 17, defect 10: an effect's declared-duration error matches the
// root's ErrInvalid (it matched only lease.ErrEffectDuration).

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/lease"
)

func TestEffectDurationErrorsMatchErrInvalid(t *testing.T) {
	for _, d := range []time.Duration{0, -1, 1<<63 - 1} {
		err := lease.RunDefaults().CheckEffect(d)
		require.ErrorIs(t, err, lease.ErrEffectDuration, "%v", d)
		require.ErrorIs(t, err, leasehold.ErrInvalid, "%v", d)
	}
}
