package postgres

import (
	"context"
	"fmt"
	"sync"
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

func TestRunEnqueueClaimComplete(t *testing.T) {
	t.Parallel()
	d, fake := openRuns(t, Config{})
	ctx := context.Background()
	out, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{
		{Queue: "emails", Payload: []byte(`{"to": "a@b"}`), MaxAttempts: 3, UniqueKey: "mail-1"},
	}})
	require.NoError(t, err)
	require.Len(t, out, 1)
	require.False(t, out[0].Existing)
	require.Equal(t, `{"to":"a@b"}`, string(out[0].Run.Payload))
	require.Nil(t, out[0].Run.Result)
	require.Equal(t, time.UTC, out[0].Run.CreatedAt.Location())

	fake.Advance(time.Second + 1500*time.Nanosecond) // sub-µs part is truncated, not rounded
	got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "emails", Owner: "worker-1", Limit: 10, Lease: runTerm})
	require.NoError(t, err)
	require.Len(t, got, 1)
	r := got[0]
	require.Equal(t, runs.StateRunning, r.State)
	require.Equal(t, int64(1), r.Fence)
	require.Equal(t, drivertest.StartTime.Add(time.Second+time.Microsecond+runTerm), r.ExpiresAt)

	done, err := d.RunComplete(ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence, Result: []byte(`[1, 2]`)})
	require.NoError(t, err)
	require.Equal(t, runs.StateCompleted, done.State)
	require.Equal(t, `[1,2]`, string(done.Result))
	require.Equal(t, drivertest.StartTime.Add(time.Second+time.Microsecond), done.FinishedAt)
	got2, err := d.RunGet(ctx, &driver.RunGetParams{ID: r.ID})
	require.NoError(t, err)
	require.Equal(t, done, got2)

	again, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "emails", UniqueKey: "mail-1"}}})
	require.NoError(t, err)
	require.True(t, again[0].Existing, "a unique key stays taken after the run finished")
	require.Equal(t, done, again[0].Run)
}

func TestRunCompleteAfterReclaimIsFencedAndChangesNothing(t *testing.T) {
	t.Parallel()
	d, fake := openRuns(t, Config{})
	ctx := context.Background()
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
	require.NoError(t, err)
	got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "runner-a", Limit: 1, Lease: runTerm})
	require.NoError(t, err)
	r := got[0]
	fake.Advance(runTerm)
	res, err := d.RunReclaim(ctx, &driver.RunReclaimParams{})
	require.NoError(t, err)
	require.Len(t, res.Reclaimed, 1)
	rec := res.Reclaimed[0]
	require.Equal(t, runs.StateAvailable, rec.State)
	require.Equal(t, int64(2), rec.Fence)
	require.Equal(t, "lease expired at 2026-11-30T09:00:30Z (owner runner-a, fence 1)", rec.Reason)
	require.Equal(t, drivertest.StartTime.Add(runTerm), rec.ScheduledAt)

	_, err = d.RunComplete(ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence, Result: []byte(`"late"`)})
	require.ErrorIs(t, err, driver.ErrFenced)
	var fe *driver.RunFencedError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, driver.RunFencedError{Op: "complete", ID: r.ID, Fence: 1, CurrentFence: 2, State: runs.StateAvailable}, *fe)
	after, err := d.RunGet(ctx, &driver.RunGetParams{ID: r.ID})
	require.NoError(t, err)
	require.Equal(t, rec, after, "the refused completion changed nothing")
}

// TestRunUniqueKeyUnderConcurrentEnqueues races eight enqueues of one key,
// each from its own connection, and two batches taking two keys in
// opposite orders (which would deadlock in ON CONFLICT without the key
// locks: the test would then take deadlock_timeout and fail).
func TestRunUniqueKeyUnderConcurrentEnqueues(t *testing.T) {
	t.Parallel()
	d, _ := openRuns(t, Config{CriticalConns: 8})
	ctx := context.Background()
	start := make(chan struct{})
	res := make([]driver.RunEnqueued, 8)
	var wg sync.WaitGroup
	for i := range res {
		wg.Go(func() {
			<-start
			out, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", UniqueKey: "k"}}})
			require.NoError(t, err)
			res[i] = out[0]
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for _, r := range res {
		require.Equal(t, res[0].Run.ID, r.Run.ID)
		if !r.Existing {
			created++
		}
	}
	require.Equal(t, 1, created)

	for round := range 3 {
		a, b := fmt.Sprintf("a%d", round), fmt.Sprintf("b%d", round)
		start := make(chan struct{})
		outs := make([][]driver.RunEnqueued, 2)
		for i, keys := range [][]string{{a, b}, {b, a}} {
			wg.Go(func() {
				<-start
				out, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{
					{Queue: "q", UniqueKey: keys[0]}, {Queue: "q", UniqueKey: keys[1]}}})
				require.NoError(t, err)
				outs[i] = out
			})
		}
		close(start)
		wg.Wait()
		require.Equal(t, outs[0][0].Run.ID, outs[1][1].Run.ID, "one run for %s", a)
		require.Equal(t, outs[0][1].Run.ID, outs[1][0].Run.ID, "one run for %s", b)
		require.NotEqual(t, outs[0][0].Existing, outs[1][1].Existing, "exactly one batch created %s", a)
		require.NotEqual(t, outs[0][1].Existing, outs[1][0].Existing, "exactly one batch created %s", b)
	}
}

func TestRunConcurrentClaimersNeverShareARun(t *testing.T) {
	t.Parallel()
	d, _ := openRuns(t, Config{})
	ctx := context.Background()
	batch := make([]runs.Enqueue, 200)
	for i := range batch {
		batch[i] = runs.Enqueue{Queue: "q", Priority: i % 3}
	}
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: batch})
	require.NoError(t, err)
	var mu sync.Mutex
	seen := map[int64]string{}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		owner := fmt.Sprintf("w%d", w)
		wg.Go(func() {
			<-start
			for {
				got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: owner, Limit: 5, Lease: runTerm})
				require.NoError(t, err)
				if len(got) == 0 {
					return
				}
				for i := 1; i < len(got); i++ {
					require.LessOrEqual(t, got[i-1].Priority, got[i].Priority, "claim order")
				}
				mu.Lock()
				for _, r := range got {
					require.Equal(t, owner, r.Owner)
					prev, dup := seen[r.ID]
					require.False(t, dup, "run %d claimed by %s and %s", r.ID, prev, owner)
					seen[r.ID] = owner
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	require.Len(t, seen, 200)
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

// TestRunReclaimReasonNamesTheExpiry pins the reclaim reason's time format:
// time.RFC3339Nano in UTC, as the SQLite driver writes it.
func TestRunReclaimReasonNamesTheExpiry(t *testing.T) {
	t.Parallel()
	for _, frac := range []time.Duration{0, time.Microsecond, 250 * time.Millisecond, 123456 * time.Microsecond} {
		t.Run(frac.String(), func(t *testing.T) {
			t.Parallel()
			d, fake := openRuns(t, Config{})
			ctx := context.Background()
			_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
			require.NoError(t, err)
			fake.Advance(frac)
			got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "runner/a@b", Limit: 1, Lease: runTerm})
			require.NoError(t, err)
			c := got[0]
			fake.Advance(time.Hour)
			res, err := d.RunReclaim(ctx, &driver.RunReclaimParams{Limit: 5})
			require.NoError(t, err)
			require.Len(t, res.Reclaimed, 1)
			require.Equal(t, fmt.Sprintf("lease expired at %s (owner runner/a@b, fence %d)",
				c.ExpiresAt.Format(time.RFC3339Nano), c.Fence), res.Reclaimed[0].Reason)
		})
	}
}
