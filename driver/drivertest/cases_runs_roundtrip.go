package drivertest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// Run round trips and races, moved here from the drivers' own tests so
// both stores answer them case for case.
var runRoundTripCases = []Case{
	{"RunEnqueueClaimCompleteRoundTrip", caseRunEnqueueClaimCompleteRoundTrip},
	{"RunCompleteAfterReclaimIsFencedAndChangesNothing", caseRunCompleteAfterReclaimIsFenced},
	{"RunEnqueueUniqueKeysInOppositeOrdersNeverDeadlock", caseRunEnqueueUniqueKeysOppositeOrders},
	{"RunReclaimReasonFormatsTheExpiryAsGoDoes", caseRunReclaimReasonFormat},
	{"RunCompleteManyOverlappingBatchesNeverDeadlock", caseRunCompleteManyOverlapping},
}

func caseRunEnqueueClaimCompleteRoundTrip(t *testing.T, f Factory) {
	e := newEnv(t, f)
	rs := e.runStore()
	out := e.enqueue(runs.Enqueue{Queue: "emails", Payload: []byte(`{ "to": "a@b" }`), MaxAttempts: 3, UniqueKey: "mail-1"})
	r := out[0].Run
	require.False(t, out[0].Existing)
	require.Equal(t, runs.StateAvailable, r.State)
	require.Equal(t, `{"to":"a@b"}`, string(r.Payload), "stored compact")
	require.Equal(t, 3, r.MaxAttempts)
	require.Equal(t, StartTime, r.ScheduledAt)
	require.Equal(t, time.UTC, r.CreatedAt.Location())
	require.True(t, r.ExpiresAt.IsZero())
	require.Nil(t, r.Result)

	e.h.Clock.Advance(time.Second + 1500*time.Nanosecond) // the sub-µs part is truncated, not rounded
	got, err := rs.RunClaim(e.ctx, &driver.RunClaimParams{Queue: "emails", Owner: "worker-1", Limit: 10, Lease: runLease})
	require.NoError(t, err)
	require.Len(t, got, 1)
	c := got[0]
	require.Equal(t, r.ID, c.ID)
	require.Equal(t, runs.StateRunning, c.State)
	require.Equal(t, int64(1), c.Fence)
	require.Equal(t, 1, c.Attempt)
	require.Equal(t, "worker-1", c.Owner)
	require.Equal(t, StartTime.Add(time.Second+time.Microsecond+runLease), c.ExpiresAt)

	done, err := rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: c.ID, Fence: c.Fence, Result: []byte(`[1, 2]`)})
	require.NoError(t, err)
	require.Equal(t, runs.StateCompleted, done.State)
	require.Equal(t, `[1,2]`, string(done.Result))
	require.Equal(t, StartTime.Add(time.Second+time.Microsecond), done.FinishedAt)
	require.Empty(t, done.Owner)
	require.True(t, done.ExpiresAt.IsZero())
	require.Equal(t, done, e.run(c.ID), "reads back as returned")

	again := e.enqueue(runs.Enqueue{Queue: "emails", UniqueKey: "mail-1"})
	require.True(t, again[0].Existing, "a unique key stays taken after the run finished")
	require.Equal(t, done, again[0].Run)
}

func caseRunCompleteAfterReclaimIsFenced(t *testing.T, f Factory) {
	e := newEnv(t, f)
	rs := e.runStore()
	e.enqueue(runs.Enqueue{Queue: "q"})
	r := e.claim("q", "runner-a", 1)[0]
	e.h.Clock.Advance(runLease) // expires_at <= now: expired
	res, err := rs.RunReclaim(e.ctx, &driver.RunReclaimParams{})
	require.NoError(t, err)
	require.Len(t, res.Reclaimed, 1)
	rec := res.Reclaimed[0]
	require.Equal(t, runs.StateAvailable, rec.State)
	require.Equal(t, int64(2), rec.Fence)
	require.Equal(t, "lease expired at 2026-11-30T09:00:30Z (owner runner-a, fence 1)", rec.Reason)
	require.Equal(t, StartTime, rec.ScheduledAt, "a reclaim keeps the run's place (docs/design/run-order.md)")
	require.Equal(t, StartTime.Add(runLease), rec.ReclaimedAt)

	_, err = rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence, Result: []byte(`"late"`)})
	require.ErrorIs(t, err, driver.ErrFenced)
	var fe *driver.RunFencedError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, driver.RunFencedError{Op: "complete", ID: r.ID, Fence: 1, CurrentFence: 2, State: runs.StateAvailable}, *fe)
	require.Equal(t, rec, e.run(r.ID), "the refused completion changed nothing")
}

// caseRunEnqueueUniqueKeysOppositeOrders: two batches taking two keys in
// opposite orders at once (which would deadlock in Postgres's ON CONFLICT
// without the drivers' key locks) end with one run per key, created by
// exactly one batch.
func caseRunEnqueueUniqueKeysOppositeOrders(t *testing.T, f Factory) {
	e := newEnv(t, f)
	rs := e.runStore()
	var wg sync.WaitGroup
	for round := range 3 {
		a, b := fmt.Sprintf("a%d", round), fmt.Sprintf("b%d", round)
		start := make(chan struct{})
		outs := make([][]driver.RunEnqueued, 2)
		for i, keys := range [][]string{{a, b}, {b, a}} {
			wg.Go(func() {
				<-start
				out, err := rs.RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{
					{Queue: "q", UniqueKey: keys[0]}, {Queue: "q", UniqueKey: keys[1]}}})
				if assert.NoError(t, err) {
					outs[i] = out
				}
			})
		}
		close(start)
		wg.Wait()
		require.False(t, t.Failed())
		require.Equal(t, outs[0][0].Run.ID, outs[1][1].Run.ID, "one run for %s", a)
		require.Equal(t, outs[0][1].Run.ID, outs[1][0].Run.ID, "one run for %s", b)
		require.NotEqual(t, outs[0][0].Existing, outs[1][1].Existing, "exactly one batch created %s", a)
		require.NotEqual(t, outs[0][1].Existing, outs[1][0].Existing, "exactly one batch created %s", b)
	}
}

// caseRunReclaimReasonFormat: the reclaim reason formats expires_at in SQL;
// it must read exactly as Go's RFC3339Nano in UTC would, whatever the
// fraction.
func caseRunReclaimReasonFormat(t *testing.T, f Factory) {
	for _, frac := range []time.Duration{0, time.Microsecond, 100 * time.Microsecond, 123456 * time.Microsecond, 250 * time.Millisecond, 500 * time.Millisecond} {
		t.Run(frac.String(), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, f)
			e.enqueue(runs.Enqueue{Queue: "q", MaxAttempts: 1})
			e.h.Clock.Advance(frac)
			c := e.claim("q", "runner/a@b", 1)[0]
			e.h.Clock.Advance(time.Hour)
			res, err := e.runStore().RunReclaim(e.ctx, &driver.RunReclaimParams{Limit: 5})
			require.NoError(t, err)
			require.Len(t, res.Reclaimed, 1)
			re := res.Reclaimed[0]
			require.Equal(t, runs.StateFailed, re.State, "attempts spent")
			require.Equal(t, e.h.Clock.Now().UTC().Truncate(time.Microsecond), re.FinishedAt)
			require.Equal(t, fmt.Sprintf("lease expired at %s (owner runner/a@b, fence %d)",
				c.ExpiresAt.Format(time.RFC3339Nano), c.Fence), re.Reason)
		})
	}
}

// caseRunCompleteManyOverlapping sends two batches completing the same
// runs in opposite orders at once (a stale duplicate of a batch completer's
// flush, say). Locking in the batch's order, each would hold the runs the
// other waits for; the drivers lock in id order (or under the single
// writer), so one batch waits behind the other and finds those runs
// completed. Each run is completed exactly once, by one of the two.
func caseRunCompleteManyOverlapping(t *testing.T, f Factory) {
	e := newEnv(t, f)
	rs := e.runStore()
	for range 3 {
		es := make([]runs.Enqueue, runs.MaxClaimBatch)
		for i := range es {
			es[i] = runs.Enqueue{Queue: "q"}
		}
		e.enqueue(es...)
		held := e.claim("q", "w", len(es))
		require.Len(t, held, len(es))
		up := make([]driver.RunCompletion, len(held))
		for i, r := range held {
			up[i] = driver.RunCompletion{ID: r.ID, Fence: r.Fence}
		}
		down := slices.Clone(up)
		slices.Reverse(down)

		start := make(chan struct{})
		res := make([]*driver.RunCompleteManyResult, 2)
		var wg sync.WaitGroup
		for i, batch := range [][]driver.RunCompletion{up, down} {
			wg.Go(func() {
				<-start
				out, err := rs.RunCompleteMany(e.ctx, &driver.RunCompleteManyParams{Runs: batch})
				if assert.NoError(t, err) { // a deadlock aborts one batch (Postgres 40P01)
					res[i] = out
				}
			})
		}
		close(start)
		wg.Wait()
		require.False(t, t.Failed())
		require.Len(t, res[0].Completed, len(held)-len(res[0].Fenced))
		require.Len(t, res[1].Completed, len(held)-len(res[1].Fenced))
		completed := slices.Concat(res[0].Completed, res[1].Completed)
		slices.Sort(completed)
		want := make([]int64, len(held))
		for i, r := range held {
			want[i] = r.ID
		}
		slices.Sort(want)
		require.Equal(t, want, completed, "each run completed once, by one batch")
	}
}
