package drivertest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// Queue control (QueueStore): pause and resume, the global concurrency
// and rate limits RunClaim enforces in its statement, the listing, and
// the refusals (an unknown queue, a bad limit) that change nothing.

func (e *env) pause(q string, paused bool) (*driver.Queue, error) {
	return e.d.QueuePause(e.ctx, &driver.QueuePauseParams{Queue: q, Paused: paused})
}

func (e *env) limits(p driver.QueueSetLimitsParams) *driver.Queue {
	e.t.Helper()
	q, err := e.d.QueueSetLimits(e.ctx, &p)
	require.NoError(e.t, err)
	return q
}

func (e *env) queues() map[string]*driver.Queue {
	e.t.Helper()
	qs, err := e.d.QueueList(e.ctx, &driver.QueueListParams{})
	require.NoError(e.t, err)
	out := map[string]*driver.Queue{}
	for _, q := range qs {
		out[q.Name] = q
	}
	return out
}

func (e *env) complete(r *driver.Run) {
	e.t.Helper()
	_, err := e.runStore().RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence})
	require.NoError(e.t, err)
}

func (e *env) enqueueN(q string, n int) {
	e.t.Helper()
	for range n {
		e.enqueue(runs.Enqueue{Queue: q})
	}
}

var queueCases = []Case{
	{"QueuePauseStopsClaimsAndResumeRestartsThem", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.enqueueN("q", 3)
		e.enqueueN("other", 1)
		held := e.claim("q", "w", 1)
		require.Len(t, held, 1)
		e.h.Clock.Advance(time.Second)
		q, err := e.pause("q", true)
		require.NoError(t, err)
		require.True(t, q.Paused)
		require.Equal(t, StartTime.Add(time.Second), q.UpdatedAt)
		require.Equal(t, q.UpdatedAt, q.CreatedAt, "the pause declared the queue")
		require.Empty(t, e.claim("q", "w", 10), "a paused queue's runs are not claimed")
		require.Len(t, e.claim("other", "w", 10), 1, "other queues are not paused")
		e.complete(held[0]) // a running run finishes
		again, err := e.pause("q", true)
		require.NoError(t, err, "pausing a paused queue is idempotent")
		require.True(t, again.Paused)
		e.h.Clock.Advance(time.Second)
		q, err = e.pause("q", false)
		require.NoError(t, err)
		require.False(t, q.Paused)
		require.Equal(t, StartTime, q.CreatedAt.Add(-time.Second))
		require.Equal(t, StartTime.Add(2*time.Second), q.UpdatedAt)
		require.Len(t, e.claim("q", "w", 10), 2, "resumed")
		got := e.queues()["q"]
		require.False(t, got.Paused)
		require.Equal(t, map[runs.State]int64{runs.StateRunning: 2, runs.StateCompleted: 1}, got.Counts)
	}},
	{"QueuePauseOfAnUnknownQueueIsTypedAndChangesNothing", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.enqueueN("known", 1)
		before, err := e.fingerprint()
		require.NoError(t, err)
		for _, paused := range []bool{true, false} {
			_, err := e.pause("nope", paused)
			require.ErrorIs(t, err, driver.ErrUnknownQueue)
			require.ErrorIs(t, err, driver.ErrInvalid)
			var ue *driver.QueueUnknownError
			require.ErrorAs(t, err, &ue)
			require.Equal(t, "nope", ue.Queue)
		}
		_, err = e.pause("a b", true)
		require.ErrorIs(t, err, driver.ErrInvalid, "a bad name is refused above the store")
		after, err := e.fingerprint()
		require.NoError(t, err)
		require.Empty(t, changedTables(before, after), "a refused pause writes nothing")
		require.NotContains(t, e.queues(), "nope")
		// Known by its runs alone: the pause creates its row.
		q, err := e.pause("known", true)
		require.NoError(t, err)
		require.True(t, q.Paused)
		// Declared: a queue with no run yet may be paused on purpose.
		q, err = e.d.QueuePause(e.ctx, &driver.QueuePauseParams{Queue: "nope", Paused: true, Declare: true})
		require.NoError(t, err)
		require.True(t, q.Paused)
		e.enqueueN("nope", 1)
		require.Empty(t, e.claim("nope", "w", 1), "declared paused before its first run")
		// A queue given limits is known too.
		e.limits(driver.QueueSetLimitsParams{Queue: "limited", MaxRunning: 1})
		_, err = e.pause("limited", true)
		require.NoError(t, err)
	}},
	{"QueueConcurrencyLimitIsNeverExceeded", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.enqueueN("q", 10)
		q := e.limits(driver.QueueSetLimitsParams{Queue: "q", MaxRunning: 3})
		require.Equal(t, 3, q.MaxRunning)
		first := e.claim("q", "a", 10)
		require.Len(t, first, 3, "the batch is cut to the limit")
		require.Empty(t, e.claim("q", "b", 10), "no free slot")
		e.complete(first[0])
		freed := e.claim("q", "b", 10)
		require.Len(t, freed, 1, "a finished run frees one slot")
		// Expired leases still count as running until the reclaimer
		// returns them: a stalled holder may still be working.
		e.h.Clock.Advance(runLease + time.Second)
		require.Empty(t, e.claim("q", "c", 10), "expired but not reclaimed: still running")
		res, err := e.runStore().RunReclaim(e.ctx, &driver.RunReclaimParams{Limit: 100})
		require.NoError(t, err)
		require.Len(t, res.Reclaimed, 3)
		require.Len(t, e.claim("q", "c", 10), 3, "reclaimed runs are claimed under the limit")
		require.Empty(t, e.claim("q", "c", 10))
		// Raising the limit frees slots at once; 0 removes it.
		e.limits(driver.QueueSetLimitsParams{Queue: "q", MaxRunning: 5})
		require.Len(t, e.claim("q", "d", 10), 2)
		e.limits(driver.QueueSetLimitsParams{Queue: "q"})
		require.Len(t, e.claim("q", "d", 10), 4, "no limit: the rest")
		require.Equal(t, map[runs.State]int64{runs.StateRunning: 9, runs.StateCompleted: 1}, e.queues()["q"].Counts)
	}},
	{"QueueConcurrencyLimitHoldsUnderConcurrentClaimers", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.enqueueN("q", 40)
		e.limits(driver.QueueSetLimitsParams{Queue: "q", MaxRunning: 4})
		var mu sync.Mutex
		total := 0
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				for range 3 {
					got, err := e.runStore().RunClaim(e.ctx, &driver.RunClaimParams{Queue: "q", Owner: string(rune('a' + i)), Limit: 3, Lease: runLease})
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					total += len(got)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Equal(t, 4, total, "24 claims of up to 3 against a limit of 4")
		require.Equal(t, int64(4), e.queues()["q"].Counts[runs.StateRunning])
	}},
	{"QueueRateLimitHoldsInEveryWindow", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.enqueueN("q", 12)
		q := e.limits(driver.QueueSetLimitsParams{Queue: "q", RateLimit: 4, RatePeriod: 10 * time.Second})
		require.Equal(t, 4, q.RateLimit)
		require.Equal(t, 10*time.Second, q.RatePeriod)
		got := e.claim("q", "a", 3)
		require.Len(t, got, 3)
		for _, r := range got {
			e.complete(r) // starts count, not running runs
		}
		e.h.Clock.Advance(4 * time.Second)
		require.Len(t, e.claim("q", "a", 10), 1, "4 starts per 10s")
		e.h.Clock.Advance(5 * time.Second) // t=9s: the first 3 starts are still in the window
		require.Empty(t, e.claim("q", "a", 10))
		e.h.Clock.Advance(time.Second) // t=10s: the window (0s, 10s] no longer holds them
		require.Len(t, e.claim("q", "a", 10), 3)
		e.h.Clock.Advance(4 * time.Second) // t=14s: the start at 4s has left too
		require.Len(t, e.claim("q", "a", 10), 1)
		e.limits(driver.QueueSetLimitsParams{Queue: "q"})
		require.Len(t, e.claim("q", "a", 10), 4, "no limit: the rest")
		var starts int
		require.NoError(t, e.h.Query(e.ctx, `SELECT count(*) FROM queue_starts`, &starts))
		require.LessOrEqual(t, starts, 4, "starts older than the window are dropped")
	}},
	{"QueueBothLimitsAndPauseTakeTheStrictest", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.enqueueN("q", 10)
		e.limits(driver.QueueSetLimitsParams{Queue: "q", MaxRunning: 2, RateLimit: 5, RatePeriod: time.Minute})
		first := e.claim("q", "a", 10)
		require.Len(t, first, 2, "concurrency binds first")
		e.complete(first[0])
		e.complete(first[1])
		require.Len(t, e.claim("q", "a", 10), 2)
		_, err := e.pause("q", true)
		require.NoError(t, err)
		require.Empty(t, e.claim("q", "a", 10), "paused")
		got := e.queues()["q"]
		require.True(t, got.Paused)
		require.Equal(t, 2, got.MaxRunning, "a pause keeps the limits")
		_, err = e.pause("q", false)
		require.NoError(t, err)
		e.limits(driver.QueueSetLimitsParams{Queue: "q", MaxRunning: 10, RateLimit: 5, RatePeriod: time.Minute})
		require.Len(t, e.claim("q", "a", 10), 1, "the rate binds: 5 starts per minute")
		require.False(t, e.queues()["q"].Paused, "setting limits keeps the pause flag")
	}},
	{"QueueSetLimitsRefusesBadLimitsAndChangesNothing", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.limits(driver.QueueSetLimitsParams{Queue: "q", MaxRunning: 2})
		before, err := e.fingerprint()
		require.NoError(t, err)
		for _, bad := range []driver.QueueSetLimitsParams{
			{Queue: "q", MaxRunning: -1},
			{Queue: "q", MaxRunning: driver.MaxQueueRunning + 1},
			{Queue: "q", RateLimit: -1, RatePeriod: time.Second},
			{Queue: "q", RateLimit: driver.MaxQueueRate + 1, RatePeriod: time.Second},
			{Queue: "q", RateLimit: 5},
			{Queue: "q", RatePeriod: time.Second},
			{Queue: "q", RateLimit: 5, RatePeriod: time.Microsecond},
			{Queue: "q", RateLimit: 5, RatePeriod: driver.MaxQueueRatePeriod + time.Second},
			{Queue: "q", RateLimit: 5, RatePeriod: time.Second + time.Nanosecond},
			{Queue: "", MaxRunning: 1},
		} {
			_, err := e.d.QueueSetLimits(e.ctx, &bad)
			require.ErrorIs(t, err, driver.ErrInvalid, "%+v", bad)
		}
		after, err := e.fingerprint()
		require.NoError(t, err)
		require.Empty(t, changedTables(before, after), "a refused limit writes nothing")
		require.Equal(t, 2, e.queues()["q"].MaxRunning)
	}},
	{"QueueListCountsRunsByStateForEveryKnownQueue", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		require.Empty(t, e.queues())
		e.enqueueN("b", 3)
		e.enqueueN("a", 1)
		done := e.claim("b", "w", 2)
		e.complete(done[0])
		e.limits(driver.QueueSetLimitsParams{Queue: "c", RateLimit: 1, RatePeriod: time.Second})
		qs, err := e.d.QueueList(e.ctx, &driver.QueueListParams{})
		require.NoError(t, err)
		require.Len(t, qs, 3)
		require.Equal(t, []string{"a", "b", "c"}, []string{qs[0].Name, qs[1].Name, qs[2].Name})
		require.Equal(t, map[runs.State]int64{runs.StateAvailable: 1}, qs[0].Counts)
		require.True(t, qs[0].CreatedAt.IsZero(), "known by its runs only")
		require.Equal(t, map[runs.State]int64{runs.StateAvailable: 1, runs.StateRunning: 1, runs.StateCompleted: 1}, qs[1].Counts)
		require.Nil(t, qs[2].Counts, "declared, no runs")
		require.Equal(t, time.Second, qs[2].RatePeriod)
	}},
}
