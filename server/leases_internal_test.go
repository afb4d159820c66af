package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// TestALeaseBookKeepsOneLeasePerRun: a newer claim of a run supersedes
// the older lease the book kept for it (its keeper entry released, its
// renewals no longer write-behind), an older one never replaces a newer;
// and a drain that still names one run under two fences sends only the
// higher and reports the lower lost, instead of a batch the store would
// refuse whole — which would stall every remote runner's renewals.
func TestALeaseBookKeepsOneLeasePerRun(t *testing.T) {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "b.db")})
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	_, err = d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
	require.NoError(t, err)
	got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "b", Limit: 1, Lease: time.Minute})
	require.NoError(t, err)
	held := got[0]

	timing := lease.RunDefaults()
	b, err := newLeaseBook(d, clock.Real(), timing, keeper.ModeWriteBehind, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.stop(ctx)) }()
	old := driver.RunLeaseRef{ID: held.ID, Fence: held.Fence - 1} // as if claimed before, by "a"
	cur := driver.RunLeaseRef{ID: held.ID, Fence: held.Fence}
	now := time.Now()
	b.confirm(old, "a", now)
	oldEntry := b.entry(old)
	b.confirm(cur, "b", now)
	require.False(t, oldEntry.Live(), "the older lease was released")
	require.False(t, b.renew(old, "a"), "its renewals are no longer write-behind")
	require.True(t, b.renew(cur, "b"))
	b.confirm(old, "a", now)
	require.Nil(t, b.entry(old), "an older lease never replaces a newer")

	// The second line: a drain naming the run twice.
	lost, err := b.flush(ctx, d, []keeper.Ref{lease.Ref(cur), lease.Ref(old)})
	require.NoError(t, err)
	require.Equal(t, []int{1}, lost, "the lower fence reported lost, the higher renewed")
}
