package drivertest

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// Setting a concurrency limit on a queue that is already running work:
// the runs claimed while it had no limit count against it (Postgres counts
// a limited queue's running runs over an index of only the runs claimed
// under a limit, migration 0017, so QueueSetLimits must add the others),
// also when claims are in flight while the limit is set.

var queueLimitSetCases = []Case{
	{"QueueConcurrencyLimitCountsRunsClaimedBeforeIt", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.enqueueN("q", 12)
		before := e.claim("q", "a", 4)
		require.Len(t, before, 4, "no limit yet")
		e.limits(driver.QueueSetLimitsParams{Queue: "q", MaxRunning: 5})
		require.Len(t, e.claim("q", "b", 10), 1, "4 running before the limit take 4 of its 5 slots")
		require.Empty(t, e.claim("q", "b", 10))
		// Removed, claimed without a limit, set again below what runs.
		e.limits(driver.QueueSetLimitsParams{Queue: "q"})
		require.Len(t, e.claim("q", "c", 2), 2, "no limit: claimed freely")
		e.limits(driver.QueueSetLimitsParams{Queue: "q", MaxRunning: 6})
		require.Empty(t, e.claim("q", "d", 10), "7 running against a limit of 6")
		e.complete(before[0])
		e.complete(before[1])
		require.Len(t, e.claim("q", "d", 10), 1, "two finished: 5 running, one slot")
		require.Equal(t, int64(6), e.queues()["q"].Counts[runs.StateRunning])
	}},
	{"QueueConcurrencyLimitSetWhileClaimsAreInFlightHolds", func(t *testing.T, f Factory) {
		// Four claimers claim one run at a time; each makes at most 5
		// claims before the limit is in place (so at most 20 run when it
		// is set, fewer than the limit), then claims until the queue gives
		// nothing three times running. A claim in flight while the limit
		// is set must end up in its count: the queue ends at the limit,
		// never above it.
		const limit = 30
		e := newEnv(t, f)
		e.enqueueN("q", 80)
		var set atomic.Bool
		setDone := make(chan struct{})
		first := make(chan struct{}, 4)
		var total atomic.Int64
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				empty := 0
				for n := 0; empty < 3; n++ {
					if n == 5 && !set.Load() {
						<-setDone
					}
					got, err := e.runStore().RunClaim(e.ctx, &driver.RunClaimParams{Queue: "q", Owner: string(rune('a' + i)), Limit: 1, Lease: runLease})
					if !assert.NoError(t, err) {
						return
					}
					total.Add(int64(len(got)))
					if n == 0 {
						first <- struct{}{}
					}
					if len(got) == 0 && set.Load() {
						empty++
					}
				}
			})
		}
		<-first // claims are under way
		e.limits(driver.QueueSetLimitsParams{Queue: "q", MaxRunning: limit})
		set.Store(true)
		close(setDone)
		wg.Wait()
		require.EqualValues(t, limit, total.Load(), "the queue fills to its limit and no further")
		require.Equal(t, int64(limit), e.queues()["q"].Counts[runs.StateRunning])
	}},
}
