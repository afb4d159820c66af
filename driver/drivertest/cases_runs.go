package drivertest

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

const runLease = 30 * time.Second

// runStore returns the driver's run half; every driver implements it.
func (e *env) runStore() driver.RunStore {
	e.t.Helper()
	rs, ok := e.d.(driver.RunStore)
	require.True(e.t, ok, "driver %s does not implement driver.RunStore", e.d.Name())
	return rs
}

func (e *env) enqueue(rs ...runs.Enqueue) []driver.RunEnqueued {
	e.t.Helper()
	out, err := e.runStore().RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: rs})
	require.NoError(e.t, err)
	require.Len(e.t, out, len(rs))
	return out
}

func (e *env) claim(queue, owner string, limit int) []*driver.Run {
	e.t.Helper()
	out, err := e.runStore().RunClaim(e.ctx, &driver.RunClaimParams{Queue: queue, Owner: owner, Limit: limit, Lease: runLease})
	require.NoError(e.t, err)
	return out
}

func (e *env) run(id int64) *driver.Run {
	e.t.Helper()
	r, err := e.runStore().RunGet(e.ctx, &driver.RunGetParams{ID: id})
	require.NoError(e.t, err)
	return r
}

// requireFencedOut tries every runner write under (id, fence) and requires each
// to be refused with ErrFenced, changing nothing.
func (e *env) requireFencedOut(id, fence int64, owner string) {
	e.t.Helper()
	rs := e.runStore()
	before := e.run(id)
	_, err := rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: id, Fence: fence, Result: []byte(`"late"`)})
	require.ErrorIs(e.t, err, driver.ErrFenced, "complete")
	_, err = rs.RunFail(e.ctx, &driver.RunFailParams{ID: id, Fence: fence, Reason: "late"})
	require.ErrorIs(e.t, err, driver.ErrFenced, "fail")
	_, err = rs.RunBlock(e.ctx, &driver.RunBlockParams{ID: id, Fence: fence, Reason: "late"})
	require.ErrorIs(e.t, err, driver.ErrFenced, "block")
	_, err = rs.RunRenew(e.ctx, &driver.RunRenewParams{ID: id, Fence: fence, Owner: owner, Lease: runLease})
	require.ErrorIs(e.t, err, driver.ErrFenced, "renew")
	var fe *driver.RunFencedError
	require.ErrorAs(e.t, err, &fe)
	require.Equal(e.t, before, e.run(id), "a fenced-out write changes nothing")
}

var runCases = []Case{
	{"RunEnqueueDefaultsAndGet", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		r := e.enqueue(runs.Enqueue{Queue: "q", Payload: []byte(` {"a": 1} `)})[0]
		require.False(t, r.Existing)
		got := r.Run
		require.Positive(t, got.ID)
		require.Equal(t, runs.StateAvailable, got.State)
		require.Equal(t, `{"a":1}`, string(got.Payload))
		require.Equal(t, runs.DefaultAttempts, got.MaxAttempts)
		require.Zero(t, got.Attempt)
		require.Zero(t, got.Fence)
		require.Equal(t, StartTime, got.ScheduledAt)
		require.Equal(t, StartTime, got.CreatedAt)
		require.True(t, got.ExpiresAt.IsZero())
		require.Equal(t, got, e.run(got.ID))
		_, err := e.runStore().RunGet(e.ctx, &driver.RunGetParams{ID: got.ID + 1000})
		require.ErrorIs(t, err, driver.ErrNotFound)
	}},
	{"RunEnqueueUniqueKeyReturnsTheFirstRun", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		first := e.enqueue(runs.Enqueue{Queue: "q", UniqueKey: "order-7"})[0]
		out := e.enqueue(runs.Enqueue{Queue: "q", UniqueKey: "order-7", Payload: []byte(`"other"`)},
			runs.Enqueue{Queue: "q", UniqueKey: "order-8"}, runs.Enqueue{Queue: "q", UniqueKey: "order-8"})
		require.True(t, out[0].Existing)
		require.Equal(t, first.Run.ID, out[0].Run.ID)
		require.Equal(t, "null", string(out[0].Run.Payload), "the first run, untouched")
		require.False(t, out[1].Existing)
		require.True(t, out[2].Existing, "a duplicate within one batch")
		require.Equal(t, out[1].Run.ID, out[2].Run.ID)
		require.Len(t, e.claim("q", "w", 10), 2)
	}},
	{"RunEnqueueUniqueKeyUnderConcurrency", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		var wg sync.WaitGroup
		res := make([]driver.RunEnqueued, 8)
		for i := range res {
			wg.Go(func() {
				out, err := e.runStore().RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", UniqueKey: "k"}}})
				if assert.NoError(t, err) {
					res[i] = out[0]
				}
			})
		}
		wg.Wait()
		require.False(t, t.Failed())
		created := 0
		for _, r := range res {
			require.Equal(t, res[0].Run.ID, r.Run.ID)
			if !r.Existing {
				created++
			}
		}
		require.Equal(t, 1, created)
		require.Len(t, e.claim("q", "w", 10), 1)
	}},
	{"RunEnqueueBadInputChangesNothing", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		for name, bad := range map[string]runs.Enqueue{
			"bad queue":           {Queue: "no spaces"},
			"empty queue":         {Queue: ""},
			"oversized payload":   {Queue: "q", Payload: []byte(`"` + strings.Repeat("x", runs.MaxPayloadBytes) + `"`)},
			"malformed payload":   {Queue: "q", Payload: []byte(`{"a":`)},
			"negative delay":      {Queue: "q", Delay: -time.Second},
			"absurd delay":        {Queue: "q", Delay: 100 * 365 * 24 * time.Hour},
			"negative priority":   {Queue: "q", Priority: -1},
			"absurd priority":     {Queue: "q", Priority: runs.MaxPriority + 1},
			"negative attempts":   {Queue: "q", MaxAttempts: -1},
			"absurd attempts":     {Queue: "q", MaxAttempts: runs.MaxAttemptsLimit + 1},
			"oversized uniquekey": {Queue: "q", UniqueKey: strings.Repeat("k", runs.MaxUniqueKeyBytes+1)},
		} {
			_, err := e.runStore().RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}, bad}})
			require.ErrorIs(t, err, driver.ErrInvalid, name)
		}
		require.Empty(t, e.claim("q", "w", 100), "a batch with one bad run writes none of it")
	}},
	{"RunClaimSetsOwnerFenceAttemptAndExpiry", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		id := e.enqueue(runs.Enqueue{Queue: "q"})[0].Run.ID
		e.h.Clock.Advance(time.Second)
		got := e.claim("q", "worker-a", 10)
		require.Len(t, got, 1)
		r := got[0]
		require.Equal(t, id, r.ID)
		require.Equal(t, runs.StateRunning, r.State)
		require.Equal(t, "worker-a", r.Owner)
		require.Equal(t, int64(1), r.Fence)
		require.Equal(t, 1, r.Attempt)
		require.Equal(t, StartTime.Add(time.Second+runLease), r.ExpiresAt)
		require.Equal(t, r, e.run(id))
		require.Empty(t, e.claim("q", "worker-b", 10), "a running run is not claimed again")
	}},
	{"RunClaimOrderScheduleQueueAndLimit", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		out := e.enqueue(
			runs.Enqueue{Queue: "q", Priority: 5},             // 0
			runs.Enqueue{Queue: "q", Priority: 1},             // 1
			runs.Enqueue{Queue: "q", Priority: 1},             // 2
			runs.Enqueue{Queue: "q", Delay: time.Minute},      // 3: not yet
			runs.Enqueue{Queue: "other"},                      // 4: other queue
			runs.Enqueue{Queue: "q", Priority: 0, Delay: 1e9}, // 5: 1s later
		)
		ids := func(rs []*driver.Run) []int64 {
			var out []int64
			for _, r := range rs {
				out = append(out, r.ID)
			}
			return out
		}
		require.Equal(t, []int64{out[1].Run.ID, out[2].Run.ID}, ids(e.claim("q", "w", 2)))
		require.Equal(t, []int64{out[0].Run.ID}, ids(e.claim("q", "w", 10)), "scheduled runs wait")
		e.h.Clock.Advance(time.Minute)
		require.Equal(t, []int64{out[5].Run.ID, out[3].Run.ID}, ids(e.claim("q", "w", 10)))
		require.Equal(t, []int64{out[4].Run.ID}, ids(e.claim("other", "w", 10)))
	}},
	{"RunClaimConcurrentClaimersNeverShareARun", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		batch := make([]runs.Enqueue, 120)
		for i := range batch {
			batch[i] = runs.Enqueue{Queue: "q", Payload: []byte(fmt.Sprint(i))}
		}
		e.enqueue(batch...)
		var mu sync.Mutex
		seen := map[int64]string{}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				owner := fmt.Sprintf("w%d", w)
				for {
					got, err := e.runStore().RunClaim(e.ctx, &driver.RunClaimParams{Queue: "q", Owner: owner, Limit: 7, Lease: runLease})
					if !assert.NoError(t, err) || len(got) == 0 {
						return
					}
					mu.Lock()
					for _, r := range got {
						prev, dup := seen[r.ID]
						assert.False(t, dup, "run %d claimed by %s and %s", r.ID, prev, owner)
						seen[r.ID] = owner
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Len(t, seen, 120)
	}},
	{"RunCompleteIsFenced", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		e.enqueue(runs.Enqueue{Queue: "q"})
		r := e.claim("q", "w", 1)[0]
		for _, fence := range []int64{r.Fence + 1, r.Fence + 100} { // a fence from the future
			_, err := rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: fence})
			require.ErrorIs(t, err, driver.ErrFenced)
		}
		e.h.Clock.Advance(time.Second)
		done, err := rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence, Result: []byte(` {"ok" : true} `)})
		require.NoError(t, err)
		require.Equal(t, runs.StateCompleted, done.State)
		require.Equal(t, `{"ok":true}`, string(done.Result))
		require.Equal(t, StartTime.Add(time.Second), done.FinishedAt)
		require.Empty(t, done.Owner)
		require.True(t, done.ExpiresAt.IsZero())
		_, err = rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence})
		require.ErrorIs(t, err, driver.ErrFenced, "a second completion")
		_, err = rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID + 1000, Fence: 1})
		require.ErrorIs(t, err, driver.ErrNotFound)
		require.Equal(t, done, e.run(r.ID))
	}},
	{"RunFailRetriesWithBackoffThenFails", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		e.enqueue(runs.Enqueue{Queue: "q", MaxAttempts: 2})
		r := e.claim("q", "w", 1)[0]
		got, err := rs.RunFail(e.ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, Reason: "boom 1", RetryAfter: 10 * time.Second})
		require.NoError(t, err)
		require.Equal(t, runs.StateAvailable, got.State)
		require.Equal(t, "boom 1", got.Reason)
		require.Equal(t, StartTime.Add(10*time.Second), got.ScheduledAt)
		require.Empty(t, got.Owner)
		require.Empty(t, e.claim("q", "w", 1), "not before the backoff")
		e.h.Clock.Advance(10 * time.Second)
		r2 := e.claim("q", "w", 1)[0]
		require.Equal(t, 2, r2.Attempt)
		require.Equal(t, int64(2), r2.Fence)
		e.requireFencedOut(r.ID, r.Fence, "w")
		got, err = rs.RunFail(e.ctx, &driver.RunFailParams{ID: r2.ID, Fence: r2.Fence, Reason: "boom 2", RetryAfter: time.Second})
		require.NoError(t, err)
		require.Equal(t, runs.StateFailed, got.State, "attempts exhausted")
		require.Equal(t, "boom 2", got.Reason)
		require.Equal(t, StartTime.Add(10*time.Second), got.FinishedAt)
		e.h.Clock.Advance(time.Minute)
		require.Empty(t, e.claim("q", "w", 1))
	}},
	{"RunBlockReleasesTheLeaseAndUnblock", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		e.enqueue(runs.Enqueue{Queue: "q"})
		r := e.claim("q", "w", 1)[0]
		got, err := rs.RunBlock(e.ctx, &driver.RunBlockParams{ID: r.ID, Fence: r.Fence, Reason: "waiting for approval"})
		require.NoError(t, err)
		require.Equal(t, runs.StateBlocked, got.State)
		require.Empty(t, got.Owner)
		require.True(t, got.ExpiresAt.IsZero())
		e.requireFencedOut(r.ID, r.Fence, "w")
		require.Empty(t, e.claim("q", "w", 1), "blocked runs are not claimed")
		_, err = rs.RunUnblock(e.ctx, &driver.RunUnblockParams{ID: r.ID})
		require.NoError(t, err)
		_, err = rs.RunUnblock(e.ctx, &driver.RunUnblockParams{ID: r.ID})
		require.ErrorIs(t, err, driver.ErrConflict, "only a blocked run unblocks")
		_, err = rs.RunUnblock(e.ctx, &driver.RunUnblockParams{ID: r.ID + 1000})
		require.ErrorIs(t, err, driver.ErrNotFound)
		r2 := e.claim("q", "w2", 1)[0]
		require.Equal(t, int64(2), r2.Fence)
		require.Equal(t, 2, r2.Attempt)
	}},
	{"RunCancelFencesOutTheHolder", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		out := e.enqueue(runs.Enqueue{Queue: "q"}, runs.Enqueue{Queue: "q", Priority: 1})
		c, err := rs.RunCancel(e.ctx, &driver.RunCancelParams{ID: out[1].Run.ID, Reason: "not needed"})
		require.NoError(t, err)
		require.Equal(t, runs.StateCancelled, c.State)
		require.Equal(t, int64(1), c.Fence, "cancel increments the fence")
		r := e.claim("q", "w", 10)
		require.Len(t, r, 1, "a cancelled run is never claimed")
		c, err = rs.RunCancel(e.ctx, &driver.RunCancelParams{ID: r[0].ID, Reason: "operator"})
		require.NoError(t, err)
		require.Equal(t, runs.StateCancelled, c.State)
		require.Equal(t, r[0].Fence+1, c.Fence)
		require.Equal(t, "operator", c.Reason)
		e.requireFencedOut(r[0].ID, r[0].Fence, "w")
		_, err = rs.RunCancel(e.ctx, &driver.RunCancelParams{ID: r[0].ID})
		require.ErrorIs(t, err, driver.ErrConflict, "already final")
		_, err = rs.RunCancel(e.ctx, &driver.RunCancelParams{ID: r[0].ID + 1000})
		require.ErrorIs(t, err, driver.ErrNotFound)
	}},
	{"RunRenewIsSyncFencedAndNeverRevives", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		e.enqueue(runs.Enqueue{Queue: "q"})
		r := e.claim("q", "w", 1)[0]
		e.h.Clock.Advance(10 * time.Second)
		got, err := rs.RunRenew(e.ctx, &driver.RunRenewParams{ID: r.ID, Fence: r.Fence, Owner: "w", Lease: runLease})
		require.NoError(t, err)
		require.Equal(t, StartTime.Add(10*time.Second+runLease), got.ExpiresAt)
		_, err = rs.RunRenew(e.ctx, &driver.RunRenewParams{ID: r.ID, Fence: r.Fence, Owner: "intruder", Lease: runLease})
		require.ErrorIs(t, err, driver.ErrFenced)
		e.h.Clock.Advance(runLease)
		_, err = rs.RunRenew(e.ctx, &driver.RunRenewParams{ID: r.ID, Fence: r.Fence, Owner: "w", Lease: runLease})
		require.ErrorIs(t, err, driver.ErrLeaseExpired, "an expired lease is never revived")
		require.Equal(t, got.ExpiresAt, e.run(r.ID).ExpiresAt)
	}},
	{"RunReclaimExpiredThenAnotherRunnerOwnsIt", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		out := e.enqueue(runs.Enqueue{Queue: "q"}, runs.Enqueue{Queue: "q", MaxAttempts: 1})
		a := e.claim("q", "runner-a", 2)
		require.Len(t, a, 2)
		e.h.Clock.Advance(runLease - time.Microsecond)
		res, err := rs.RunReclaim(e.ctx, &driver.RunReclaimParams{})
		require.NoError(t, err)
		require.Empty(t, res.Reclaimed, "nothing is reclaimed before it expires")
		e.h.Clock.Advance(time.Microsecond)
		res, err = rs.RunReclaim(e.ctx, &driver.RunReclaimParams{})
		require.NoError(t, err)
		require.Len(t, res.Reclaimed, 2)
		byID := map[int64]*driver.Run{}
		for _, r := range res.Reclaimed {
			byID[r.ID] = r
			require.Equal(t, int64(2), r.Fence, "reclaim increments the fence")
			require.Contains(t, r.Reason, "lease expired")
			require.Empty(t, r.Owner)
		}
		require.Equal(t, runs.StateAvailable, byID[out[0].Run.ID].State)
		require.Equal(t, runs.StateFailed, byID[out[1].Run.ID].State, "attempts exhausted")
		for _, r := range a {
			e.requireFencedOut(r.ID, r.Fence, "runner-a")
		}
		b := e.claim("q", "runner-b", 10)
		require.Len(t, b, 1)
		require.Equal(t, int64(3), b[0].Fence)
		done, err := rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: b[0].ID, Fence: b[0].Fence})
		require.NoError(t, err)
		require.Equal(t, runs.StateCompleted, done.State)
		e.requireFencedOut(a[0].ID, a[0].Fence, "runner-a")
	}},
	{"RunReclaimOnEveryReplicaReclaimsEachOnce", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		batch := make([]runs.Enqueue, 250)
		for i := range batch {
			batch[i] = runs.Enqueue{Queue: "q"}
		}
		e.enqueue(batch...)
		for len(e.claim("q", "w", runs.MaxClaimBatch)) > 0 {
		}
		e.h.Clock.Advance(runLease)
		var mu sync.Mutex
		seen := map[int64]int{}
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				for {
					res, err := e.runStore().RunReclaim(e.ctx, &driver.RunReclaimParams{Limit: 40})
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					for _, r := range res.Reclaimed {
						seen[r.ID]++
					}
					mu.Unlock()
					if len(res.Reclaimed) < 40 {
						return
					}
				}
			})
		}
		wg.Wait()
		require.Len(t, seen, 250)
		for id, n := range seen {
			require.Equal(t, 1, n, "run %d reclaimed %d times", id, n)
		}
		got := e.claim("q", "w2", runs.MaxClaimBatch)
		require.Len(t, got, 250)
		sort.Slice(got, func(i, j int) bool { return got[i].ID < got[j].ID })
		for _, r := range got {
			require.Equal(t, int64(3), r.Fence)
		}
	}},
	{"RunWritesRefuseBadInput", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		e.enqueue(runs.Enqueue{Queue: "q"})
		r := e.claim("q", "w", 1)[0]
		before := e.run(r.ID)
		errs := []error{}
		add := func(_ any, err error) { errs = append(errs, err) }
		add(rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: 0, Fence: 1}))
		add(rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: 0}))
		add(rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: -3}))
		add(rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence, Result: []byte(`{"a":`)}))
		add(rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence, Result: []byte(`"` + strings.Repeat("x", runs.MaxPayloadBytes) + `"`)}))
		add(rs.RunFail(e.ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, Reason: "\xff"}))
		add(rs.RunFail(e.ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, RetryAfter: -time.Second}))
		add(rs.RunFail(e.ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, Reason: strings.Repeat("r", runs.MaxReasonBytes+1)}))
		add(rs.RunRenew(e.ctx, &driver.RunRenewParams{ID: r.ID, Fence: r.Fence, Owner: "w", Lease: 0}))
		add(rs.RunRenew(e.ctx, &driver.RunRenewParams{ID: r.ID, Fence: r.Fence, Owner: "w", Lease: 25 * time.Hour}))
		add(rs.RunClaim(e.ctx, &driver.RunClaimParams{Queue: "q", Owner: "w", Limit: 0, Lease: runLease}))
		add(rs.RunClaim(e.ctx, &driver.RunClaimParams{Queue: "q", Owner: "w", Limit: runs.MaxClaimBatch + 1, Lease: runLease}))
		add(rs.RunClaim(e.ctx, &driver.RunClaimParams{Queue: "q", Owner: "bad owner", Limit: 1, Lease: runLease}))
		add(rs.RunClaim(e.ctx, &driver.RunClaimParams{Queue: "bad queue", Owner: "w", Limit: 1, Lease: runLease}))
		add(rs.RunClaim(e.ctx, &driver.RunClaimParams{Queue: "q", Owner: "w", Limit: 1, Lease: -time.Second}))
		for i, err := range errs {
			require.ErrorIs(t, err, driver.ErrInvalid, "bad input %d", i)
		}
		require.Equal(t, before, e.run(r.ID), "nothing changed")
	}},
	{"RunCompleteManyCompletesHeldRunsAndReportsFencedOnes", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		// reclaimed: claimed by runner-a under fence 1, expired, reclaimed
		// (fence 2), then claimed again by runner-b under fence 3.
		reclaimed := e.enqueue(runs.Enqueue{Queue: "q"})[0].Run.ID
		old := e.claim("q", "runner-a", 1)[0]
		e.h.Clock.Advance(runLease)
		res, err := rs.RunReclaim(e.ctx, &driver.RunReclaimParams{})
		require.NoError(t, err)
		require.Len(t, res.Reclaimed, 1)
		out := e.enqueue(runs.Enqueue{Queue: "q"}, runs.Enqueue{Queue: "q"}, runs.Enqueue{Queue: "q"})
		held := map[int64]*driver.Run{}
		for _, r := range e.claim("q", "runner-b", 10) {
			held[r.ID] = r
		}
		require.Len(t, held, 4)
		require.Equal(t, old.Fence+2, held[reclaimed].Fence)
		a, b, done := held[out[0].Run.ID], held[out[1].Run.ID], held[out[2].Run.ID]
		_, err = rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: done.ID, Fence: done.Fence, Result: []byte(`"first"`)})
		require.NoError(t, err)
		missing := done.ID + 1000
		beforeReclaimed, beforeDone := e.run(reclaimed), e.run(done.ID)

		e.h.Clock.Advance(time.Second)
		got, err := rs.RunCompleteMany(e.ctx, &driver.RunCompleteManyParams{Runs: []driver.RunCompletion{
			{ID: a.ID, Fence: a.Fence, Result: []byte(` {"n" : 1} `)},   // 0: held
			{ID: reclaimed, Fence: old.Fence},                           // 1: a reclaimed run's old fence
			{ID: missing, Fence: 1},                                     // 2: no such run
			{ID: b.ID, Fence: b.Fence},                                  // 3: held, no result
			{ID: done.ID, Fence: done.Fence, Result: []byte(`"again"`)}, // 4: already completed
		}})
		require.NoError(t, err)
		require.Equal(t, []int64{a.ID, b.ID}, got.Completed, "in batch order")
		require.Equal(t, []int{1, 2, 4}, got.Fenced)

		finished := StartTime.Add(runLease + time.Second)
		for _, c := range []struct {
			id     int64
			result string
		}{{a.ID, `{"n":1}`}, {b.ID, ""}} {
			r := e.run(c.id)
			require.Equal(t, runs.StateCompleted, r.State)
			require.Equal(t, c.result, string(r.Result))
			require.Equal(t, finished, r.FinishedAt, "the store clock at the batch")
			require.Empty(t, r.Owner)
			require.True(t, r.ExpiresAt.IsZero())
			require.Equal(t, held[c.id].Fence, r.Fence, "completion never changes the fence")
		}
		require.Nil(t, e.run(b.ID).Result, "no result is stored as none")
		require.Equal(t, beforeReclaimed, e.run(reclaimed), "the new holder's run is untouched")
		require.Equal(t, beforeDone, e.run(done.ID), "a completed run keeps its first result")
		_, err = rs.RunGet(e.ctx, &driver.RunGetParams{ID: missing})
		require.ErrorIs(t, err, driver.ErrNotFound, "a missing run is not created")

		// The new holder completes under its own fence; a second batch of
		// the same completions is refused whole, changing nothing.
		got, err = rs.RunCompleteMany(e.ctx, &driver.RunCompleteManyParams{Runs: []driver.RunCompletion{
			{ID: reclaimed, Fence: held[reclaimed].Fence}}})
		require.NoError(t, err)
		require.Equal(t, []int64{reclaimed}, got.Completed)
		require.Empty(t, got.Fenced)
		afterA := e.run(a.ID)
		got, err = rs.RunCompleteMany(e.ctx, &driver.RunCompleteManyParams{Runs: []driver.RunCompletion{
			{ID: a.ID, Fence: a.Fence, Result: []byte(`"late"`)}, {ID: b.ID, Fence: b.Fence}}})
		require.NoError(t, err)
		require.Empty(t, got.Completed)
		require.Equal(t, []int{0, 1}, got.Fenced)
		require.Equal(t, afterA, e.run(a.ID))

		got, err = rs.RunCompleteMany(e.ctx, &driver.RunCompleteManyParams{})
		require.NoError(t, err)
		require.Empty(t, got.Completed, "an empty batch")
		require.Empty(t, got.Fenced, "an empty batch")
	}},
	{"RunCompleteManyLargeBatch", func(t *testing.T, f Factory) {
		// A batch larger than any one statement or chunk a driver might
		// use, with refusals scattered through it: every completion is
		// judged on its own, whatever its place in the batch.
		e := newEnv(t, f)
		const n = 2345
		batch := make([]runs.Enqueue, n)
		for i := range batch {
			batch[i] = runs.Enqueue{Queue: "q"}
		}
		e.enqueue(batch...)
		var held []*driver.Run
		for len(held) < n {
			got := e.claim("q", "w", runs.MaxClaimBatch)
			require.NotEmpty(t, got)
			held = append(held, got...)
		}
		cs := make([]driver.RunCompletion, n)
		var wantDone []int64
		var wantFenced []int
		for i, r := range held {
			cs[i] = driver.RunCompletion{ID: r.ID, Fence: r.Fence, Result: fmt.Appendf(nil, `{"i":%d}`, i)}
			if i%7 == 3 {
				cs[i].Fence++ // a fence from the future
				wantFenced = append(wantFenced, i)
			} else {
				wantDone = append(wantDone, r.ID)
			}
		}
		got, err := e.runStore().RunCompleteMany(e.ctx, &driver.RunCompleteManyParams{Runs: cs})
		require.NoError(t, err)
		require.Equal(t, wantDone, got.Completed)
		require.Equal(t, wantFenced, got.Fenced)
		for _, i := range []int{0, 3, 99, 100, 101, n - 2, n - 1} {
			r := e.run(held[i].ID)
			if i%7 == 3 {
				require.Equal(t, held[i], r, "completion %d was refused: run unchanged", i)
				continue
			}
			require.Equal(t, runs.StateCompleted, r.State, "completion %d", i)
			require.Equal(t, fmt.Sprintf(`{"i":%d}`, i), string(r.Result), "completion %d", i)
		}
	}},
	{"RunCompleteManyRefusesBadInput", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		e.enqueue(runs.Enqueue{Queue: "q"}, runs.Enqueue{Queue: "q"})
		held := e.claim("q", "w", 2)
		require.Len(t, held, 2)
		r, other := held[0], held[1]
		before, beforeOther := e.run(r.ID), e.run(other.ID)
		ok := driver.RunCompletion{ID: r.ID, Fence: r.Fence, Result: []byte(`"fine"`)}
		tooMany := make([]driver.RunCompletion, driver.MaxRunCompleteBatch+1)
		for i := range tooMany {
			tooMany[i] = driver.RunCompletion{ID: r.ID + int64(i), Fence: 1}
		}
		for name, batch := range map[string][]driver.RunCompletion{
			"zero id":           {ok, {ID: 0, Fence: 1}},
			"negative id":       {ok, {ID: -1, Fence: 1}},
			"zero fence":        {ok, {ID: other.ID, Fence: 0}},
			"negative fence":    {ok, {ID: other.ID, Fence: -2}},
			"malformed result":  {ok, {ID: other.ID, Fence: other.Fence, Result: []byte(`{"a":`)}},
			"oversized result":  {ok, {ID: other.ID, Fence: other.Fence, Result: []byte(`"` + strings.Repeat("x", runs.MaxPayloadBytes) + `"`)}},
			"duplicate id":      {ok, {ID: other.ID, Fence: other.Fence}, {ID: r.ID, Fence: r.Fence}},
			"too many in batch": tooMany,
		} {
			_, err := rs.RunCompleteMany(e.ctx, &driver.RunCompleteManyParams{Runs: batch})
			require.ErrorIs(t, err, driver.ErrInvalid, name)
			var ie *journal.InputError
			require.ErrorAs(t, err, &ie, name)
		}
		require.Equal(t, before, e.run(r.ID), "a batch with one bad completion writes none of it")
		require.Equal(t, beforeOther, e.run(other.ID))
	}},
}
