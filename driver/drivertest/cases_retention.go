package drivertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// Retention (RunDeleteFinished): the cleaner deletes finished runs past
// their retention with their effects and events, in bounded batches,
// never a run with an unresolved uncertain effect, never a world.

// finishedRun enqueues, claims and finishes one run of queue q in state
// s, with an event and a committed effect when rich.
func (e *env) finishedRun(q string, s runs.State, rich bool) *driver.Run {
	e.t.Helper()
	rs, es := e.runStore(), e.effects()
	e.enqueue(runs.Enqueue{Queue: q, MaxAttempts: 1})
	got := e.claim(q, "w", 1)
	require.Len(e.t, got, 1)
	r := got[0]
	if rich {
		res, err := es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{
			{RunID: r.ID, Fence: r.Fence, Seq: 1, Kind: "k", Payload: []byte(`{}`)},
			{RunID: r.ID, Fence: r.Fence, Seq: 2, Kind: "k", Payload: []byte(`{}`)}}})
		require.NoError(e.t, err)
		require.Empty(e.t, res.Fenced)
		_, err = es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "pay"})
		require.NoError(e.t, err)
		_, err = es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "pay", Result: []byte(`1`)})
		require.NoError(e.t, err)
	}
	var err error
	switch s {
	case runs.StateCompleted:
		r, err = rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence})
	case runs.StateFailed:
		r, err = rs.RunFail(e.ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, Reason: "boom"})
	case runs.StateCancelled:
		r, err = rs.RunCancel(e.ctx, &driver.RunCancelParams{ID: r.ID, Reason: "op"})
	}
	require.NoError(e.t, err)
	require.Equal(e.t, s, r.State)
	return r
}

func (e *env) deleteFinished(s runs.State, older time.Duration, limit int) *driver.RunDeleteFinishedResult {
	e.t.Helper()
	res, err := e.d.RunDeleteFinished(e.ctx, &driver.RunDeleteFinishedParams{State: s, OlderThan: older, Limit: limit})
	require.NoError(e.t, err)
	return res
}

func (e *env) requireGone(id int64) {
	e.t.Helper()
	_, err := e.runStore().RunGet(e.ctx, &driver.RunGetParams{ID: id})
	require.ErrorIs(e.t, err, driver.ErrNotFound, "run %d", id)
	effs, err := e.effects().RunEffectList(e.ctx, &driver.RunEffectListParams{RunID: id})
	require.NoError(e.t, err)
	require.Empty(e.t, effs, "run %d's effects", id)
	evs, err := e.effects().RunEventList(e.ctx, &driver.RunEventListParams{RunID: id})
	require.NoError(e.t, err)
	require.Empty(e.t, evs, "run %d's events", id)
}

var retentionCases = []Case{
	{"RunDeleteFinishedDeletesOldRunsWithEffectsAndEventsInBatches", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w", "home")
		_, err := e.append1("w", "home", 1, 1, "note", `{}`)
		require.NoError(t, err)
		var done []*driver.Run
		for range 3 {
			done = append(done, e.finishedRun("q", runs.StateCompleted, true))
		}
		failed := e.finishedRun("q", runs.StateFailed, true)
		cancelled := e.finishedRun("q", runs.StateCancelled, false)
		e.enqueue(runs.Enqueue{Queue: "live"})
		running := e.claim("live", "w", 1)[0]
		e.enqueue(runs.Enqueue{Queue: "live"})
		e.h.Clock.Advance(time.Hour)
		e.enqueue(runs.Enqueue{Queue: "live"}) // queued, not finished: never a candidate
		young := e.finishedRun("q", runs.StateCompleted, true)

		require.Zero(t, *e.deleteFinished(runs.StateCompleted, 2*time.Hour, 10), "nothing finished 2 h ago")
		first := e.deleteFinished(runs.StateCompleted, 30*time.Minute, 2)
		require.Equal(t, driver.RunDeleteFinishedResult{Runs: 2, Effects: 2, Events: 4}, *first, "a batch is bounded by its limit")
		e.requireGone(done[0].ID)
		e.requireGone(done[1].ID)
		second := e.deleteFinished(runs.StateCompleted, 30*time.Minute, 2)
		require.Equal(t, driver.RunDeleteFinishedResult{Runs: 1, Effects: 1, Events: 2}, *second, "oldest first; the young one stays")
		e.requireGone(done[2].ID)
		require.Equal(t, young, e.run(young.ID))
		require.Equal(t, failed, e.run(failed.ID), "another state's retention is its own")

		require.Equal(t, int64(1), e.deleteFinished(runs.StateFailed, 30*time.Minute, 10).Runs)
		e.requireGone(failed.ID)
		require.Equal(t, int64(1), e.deleteFinished(runs.StateCancelled, 30*time.Minute, 10).Runs)
		e.requireGone(cancelled.ID)
		require.Equal(t, running.ID, e.run(running.ID).ID, "a running run is never deleted")
		require.Len(t, e.claim("live", "w2", 10), 2, "queued runs untouched")
		require.Len(t, e.read("w"), 2, "a world's journal is never touched")
		e.audit("w")
	}},
	{"RunDeleteFinishedKeepsARunWithAnUncertainEffect", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs, es := e.runStore(), e.effects()
		e.enqueue(runs.Enqueue{Queue: "q"})
		r := e.claim("q", "w", 1)[0]
		_, err := es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "charge"})
		require.NoError(t, err) // the intent, never committed: the effect may or may not have happened
		_, err = rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence})
		require.NoError(t, err)
		plain := e.finishedRun("q", runs.StateCompleted, false)
		e.h.Clock.Advance(30 * 24 * time.Hour)
		require.Equal(t, int64(1), e.deleteFinished(runs.StateCompleted, time.Hour, 10).Runs)
		e.requireGone(plain.ID)
		require.Zero(t, e.deleteFinished(runs.StateCompleted, time.Hour, 10).Runs, "kept, however old")
		kept := e.run(r.ID)
		require.Equal(t, runs.StateCompleted, kept.State)
		effs, err := es.RunEffectList(e.ctx, &driver.RunEffectListParams{RunID: r.ID})
		require.NoError(t, err)
		require.Len(t, effs, 1)
		require.False(t, effs[0].Committed)
	}},
	{"RunDeleteFinishedRefusesBadInput", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		r := e.finishedRun("q", runs.StateCompleted, false)
		e.h.Clock.Advance(time.Hour)
		for _, p := range []driver.RunDeleteFinishedParams{
			{State: runs.StateRunning, OlderThan: time.Second, Limit: 1},
			{State: "done", OlderThan: time.Second, Limit: 1},
			{State: runs.StateCompleted, OlderThan: 0, Limit: 1},
			{State: runs.StateCompleted, OlderThan: -time.Second, Limit: 1},
			{State: runs.StateCompleted, OlderThan: runs.MaxRetention + time.Hour, Limit: 1},
			{State: runs.StateCompleted, OlderThan: time.Second, Limit: 0},
			{State: runs.StateCompleted, OlderThan: time.Second, Limit: driver.MaxRunDeleteBatch + 1},
		} {
			_, err := e.d.RunDeleteFinished(e.ctx, &p)
			requireInputError(t, err, "delete finished")
		}
		require.Equal(t, r, e.run(r.ID), "nothing deleted")
	}},
}
