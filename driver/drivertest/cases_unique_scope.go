package drivertest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// Unique keys scoped by state and period: a key is held while its run is
// in one of the run's unique states (default: available, running,
// blocked, completed) and only within its period bucket of the store
// clock.

func (e *env) enqueueOne(en runs.Enqueue) driver.RunEnqueued {
	e.t.Helper()
	return e.enqueue(en)[0]
}

var uniqueScopeCases = []Case{
	{"UniqueKeyIsHeldWhileQueuedRunningOrCompletedButFreedByFailOrCancel", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		first := e.enqueueOne(runs.Enqueue{Queue: "q", UniqueKey: "k", MaxAttempts: 1})
		require.False(t, first.Existing)
		require.True(t, e.enqueueOne(runs.Enqueue{Queue: "q", UniqueKey: "k"}).Existing, "queued holds")
		r := e.claim("q", "w", 1)[0]
		again := e.enqueueOne(runs.Enqueue{Queue: "q", UniqueKey: "k"})
		require.True(t, again.Existing, "running holds")
		require.Equal(t, r.ID, again.Run.ID)
		_, err := rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence})
		require.NoError(t, err)
		again = e.enqueueOne(runs.Enqueue{Queue: "q", UniqueKey: "k"})
		require.True(t, again.Existing, "completed holds (until the cleaner deletes it)")
		require.Equal(t, runs.StateCompleted, again.Run.State)

		e.enqueueOne(runs.Enqueue{Queue: "f", UniqueKey: "kf", MaxAttempts: 1})
		rf := e.claim("f", "w", 1)[0]
		_, err = rs.RunFail(e.ctx, &driver.RunFailParams{ID: rf.ID, Fence: rf.Fence, Reason: "boom"})
		require.NoError(t, err)
		nf := e.enqueueOne(runs.Enqueue{Queue: "f", UniqueKey: "kf"})
		require.False(t, nf.Existing, "a failed run frees its key by default")
		require.NotEqual(t, rf.ID, nf.Run.ID)

		c := e.enqueueOne(runs.Enqueue{Queue: "c", UniqueKey: "kc"})
		_, err = rs.RunCancel(e.ctx, &driver.RunCancelParams{ID: c.Run.ID, Reason: "op"})
		require.NoError(t, err)
		require.False(t, e.enqueueOne(runs.Enqueue{Queue: "c", UniqueKey: "kc"}).Existing, "a cancelled run frees its key by default")

		e.h.Clock.Advance(25 * time.Hour)
		require.Equal(t, int64(1), e.deleteFinished(runs.StateCompleted, 24*time.Hour, 10).Runs)
		fresh := e.enqueueOne(runs.Enqueue{Queue: "q", UniqueKey: "k"})
		require.False(t, fresh.Existing, "a completed run past retention was deleted: the key is free")
		require.NotEqual(t, first.Run.ID, fresh.Run.ID)
	}},
	{"UniqueStatesAllHoldsTheKeyThroughFailAndCancel", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.enqueueOne(runs.Enqueue{Queue: "f", UniqueKey: "k", MaxAttempts: 1, UniqueStates: runs.AllStates()})
		rf := e.claim("f", "w", 1)[0]
		_, err := e.runStore().RunFail(e.ctx, &driver.RunFailParams{ID: rf.ID, Fence: rf.Fence, Reason: "boom"})
		require.NoError(t, err)
		got := e.enqueueOne(runs.Enqueue{Queue: "f", UniqueKey: "k"})
		require.True(t, got.Existing, "the first run's states decide: it holds when failed")
		require.Equal(t, rf.ID, got.Run.ID)
		require.Equal(t, runs.StateFailed, got.Run.State)
	}},
	{"UniquePeriodBucketsTheKeyOnTheStoreClock", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		day := runs.Enqueue{Queue: "q", UniqueKey: "report", UniquePeriod: 24 * time.Hour}
		a := e.enqueueOne(day)
		require.False(t, a.Existing)
		e.h.Clock.Advance(14 * time.Hour) // 23:00 UTC, same day
		b := e.enqueueOne(day)
		require.True(t, b.Existing)
		require.Equal(t, a.Run.ID, b.Run.ID)
		e.h.Clock.Advance(time.Hour + time.Second) // past midnight UTC
		c := e.enqueueOne(day)
		require.False(t, c.Existing, "a new day, a new run, while yesterday's is still queued")
		d := e.enqueueOne(day)
		require.True(t, d.Existing)
		require.Equal(t, c.Run.ID, d.Run.ID, "the holder of today's bucket, not yesterday's")
		plain := e.enqueueOne(runs.Enqueue{Queue: "q", UniqueKey: "report"})
		require.False(t, plain.Existing, "the key without a period is its own bucket")
		both := e.enqueue(runs.Enqueue{Queue: "q", UniqueKey: "hourly", UniquePeriod: time.Hour},
			runs.Enqueue{Queue: "q", UniqueKey: "hourly", UniquePeriod: time.Hour})
		require.False(t, both[0].Existing)
		require.True(t, both[1].Existing, "a key twice in one batch goes to its first run")
		require.Equal(t, both[0].Run.ID, both[1].Run.ID)
	}},
	{"UniquePeriodUnderConcurrencyEnqueuesOneRun", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		const n = 8
		var wg sync.WaitGroup
		out := make([]driver.RunEnqueued, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				got, err := e.runStore().RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{
					{Queue: "q", UniqueKey: "tick", UniquePeriod: time.Minute, UniqueStates: runs.AllStates()}}})
				errs[i] = err
				if err == nil {
					out[i] = got[0]
				}
			})
		}
		wg.Wait()
		inserted := 0
		for i := range n {
			require.NoError(t, errs[i])
			require.Equal(t, out[0].Run.ID, out[i].Run.ID)
			if !out[i].Existing {
				inserted++
			}
		}
		require.Equal(t, 1, inserted)
	}},
	{"UniqueScopeRefusesBadInput", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		for _, en := range []runs.Enqueue{
			{Queue: "q", UniqueKey: "k", UniqueStates: []runs.State{runs.StateAvailable, runs.StateCompleted}},
			{Queue: "q", UniqueKey: "k", UniqueStates: []runs.State{"available", "running", "blocked", "done"}},
			{Queue: "q", UniqueKey: "k", UniquePeriod: 500 * time.Millisecond},
			{Queue: "q", UniqueKey: "k", UniquePeriod: -time.Hour},
			{Queue: "q", UniqueKey: "k", UniquePeriod: runs.MaxUniquePeriod + time.Hour},
			{Queue: "q", UniquePeriod: time.Hour},
			{Queue: "q", UniqueStates: runs.AllStates()},
		} {
			_, err := e.runStore().RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{en}})
			requireInputError(t, err, "enqueue with a bad unique scope")
		}
		require.Empty(t, e.claim("q", "w", 10), "nothing enqueued")
	}},
}
