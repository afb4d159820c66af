package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/runs"
)

const runTerm = 30 * time.Second

// openRuns opens a migrated driver on a fresh schema with a fake store
// clock at drivertest.StartTime.
func openRuns(t *testing.T, cfg Config) (*Driver, *clock.Fake) {
	t.Helper()
	fake := clock.NewFake(drivertest.StartTime)
	cfg.StoreClock = fake
	return open(t, cfg), fake
}

// TestRunsRealStoreClock runs without a StoreClock: clock_timestamp() is
// the time of every write and comparison.
func TestRunsRealStoreClock(t *testing.T) {
	t.Parallel()
	d := open(t, Config{})
	ctx := context.Background()
	before, err := d.StoreNow(ctx)
	require.NoError(t, err)
	out, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
	require.NoError(t, err)
	require.False(t, out[0].Run.CreatedAt.Before(before.Truncate(time.Microsecond)))
	got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "w", Limit: 1, Lease: runTerm})
	require.NoError(t, err)
	require.Len(t, got, 1)
	r := got[0]
	require.WithinDuration(t, before.Add(runTerm), r.ExpiresAt, 10*time.Second)
	renewed, err := d.RunRenew(ctx, &driver.RunRenewParams{ID: r.ID, Fence: r.Fence, Owner: "w", Lease: runTerm})
	require.NoError(t, err)
	require.False(t, renewed.ExpiresAt.Before(r.ExpiresAt))
	res, err := d.RunReclaim(ctx, &driver.RunReclaimParams{})
	require.NoError(t, err)
	require.Empty(t, res.Reclaimed, "a lease taken just now is live on the store clock")
}

// TestRoundTripsPerRunOp pins the cost of each run operation on a warm
// connection: one round trip each, two for a refused single-run write (the
// refusal reads the run to say why); a batch's refusals cost nothing more.
func TestRoundTripsPerRunOp(t *testing.T) {
	t.Parallel()
	url, schema := testdb.Schema(t)
	fake := clock.NewFake(drivertest.StartTime)
	cfg := Config{URL: url, Schema: schema, CriticalConns: 1, GeneralConns: 1, StoreClock: fake}
	ctx := context.Background()
	d, writes := openCounting(t, cfg)

	n := 0
	enqueue := func() {
		n++
		_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{
			{Queue: "q"}, {Queue: "q", UniqueKey: fmt.Sprint("k", n)}, {Queue: "q", UniqueKey: "taken"}}})
		require.NoError(t, err)
	}
	enqueueKeyless := func() {
		out, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}, {Queue: "q", Priority: 1}}})
		require.NoError(t, err)
		require.Less(t, out[0].Run.ID, out[1].Run.ID)
	}
	var held []*driver.Run
	claim := func() {
		got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "w", Limit: 2, Lease: runTerm})
		require.NoError(t, err)
		held = append(held, got...)
	}
	pop := func() *driver.Run {
		r := held[0]
		held = held[1:]
		return r
	}
	complete := func() {
		r := pop()
		_, err := d.RunComplete(ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence})
		require.NoError(t, err)
	}
	completeMany := func() { // one held run, one refused: no extra trip for the refusal
		r := pop()
		res, err := d.RunCompleteMany(ctx, &driver.RunCompleteManyParams{Runs: []driver.RunCompletion{
			{ID: r.ID, Fence: r.Fence}, {ID: 1, Fence: 99}}})
		require.NoError(t, err)
		require.Equal(t, []int64{r.ID}, res.Completed)
	}
	refused := func() {
		_, err := d.RunComplete(ctx, &driver.RunCompleteParams{ID: 1, Fence: 99})
		require.ErrorIs(t, err, driver.ErrFenced)
	}
	reclaim := func() {
		_, err := d.RunReclaim(ctx, &driver.RunReclaimParams{})
		require.NoError(t, err)
	}
	for _, c := range []struct {
		name  string
		op    func()
		trips int64
	}{
		{"enqueue (three runs, two unique keys, one taken)", enqueue, 1},
		{"enqueue (two runs without a key: one statement)", enqueueKeyless, 1},
		{"claim", claim, 1},
		{"complete", complete, 1},
		{"complete many", completeMany, 1},
		{"refused complete", refused, 2},
		{"reclaim", reclaim, 1},
	} {
		c.op() // warm: prepares the statements on the pool's one connection
		before := writes.Load()
		c.op()
		require.Equal(t, c.trips, writes.Load()-before, c.name)
	}
}
