package drivertest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// The effect ledger, transactional effects and run events in detail, moved
// here from the drivers' own tests so both stores answer them case for
// case.
var effectLedgerCases = []Case{
	{"EffectBeginCommitListRoundTrip", caseEffectBeginCommitList},
	{"EffectUncertainAfterReclaimResolvesBothWays", caseEffectUncertainResolvesBothWays},
	{"EffectBeginRaceStartsOnce", caseEffectBeginRaceStartsOnce},
	{"TxRollsBackEverythingItRefuses", caseTxRollsBackWhatItRefuses},
	{"TxConcurrentSameKeyRunsFnOnce", caseTxConcurrentSameKeyRunsFnOnce},
	{"TxWhoseFnReleasesItsRunIsRefused", caseTxWhoseFnReleasesItsRunIsRefused},
	{"EventsRetriedFencedAndPaged", caseEventsRetriedFencedAndPaged},
	{"EventsAcrossChunksReportFencedByIndex", caseEventsAcrossChunks},
}

func caseEffectBeginCommitList(t *testing.T, f Factory) {
	e := newEnv(t, f)
	es := e.effects()
	r := e.claimOne("a")
	p := &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "charge"}

	eff, err := es.RunEffectBegin(e.ctx, p)
	require.NoError(t, err)
	require.Equal(t, &driver.Effect{RunID: r.ID, Key: "charge", Fence: r.Fence, CreatedAt: StartTime,
		Outcome: driver.EffectStarted}, eff)

	e.h.Clock.Advance(time.Second)
	c, err := es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "charge", Result: []byte(` {"id": "ch_1"} `)})
	require.NoError(t, err)
	require.Equal(t, &driver.Effect{RunID: r.ID, Key: "charge", Fence: r.Fence, Committed: true, Result: []byte(`{"id":"ch_1"}`),
		CreatedAt: StartTime, CommittedAt: StartTime.Add(time.Second)}, c)
	require.Equal(t, time.UTC, c.CommittedAt.Location())

	again, err := es.RunEffectBegin(e.ctx, p)
	require.NoError(t, err)
	want := *c
	want.Outcome = driver.EffectCommitted
	require.Equal(t, &want, again, "the stored result, unchanged")

	_, err = es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "charge"})
	require.ErrorIs(t, err, driver.ErrConflict, "committed under this fence already")
	require.NotErrorIs(t, err, driver.ErrFenced, "a repeated commit is not a lost lease")
	_, err = es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "never-begun"})
	require.ErrorIs(t, err, driver.ErrFenced, "this fence did not start it")

	// An effect without a result stores NULL and reads back nil.
	_, err = es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "b-plain"})
	require.NoError(t, err)
	plain, err := es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "b-plain"})
	require.NoError(t, err)
	require.Nil(t, plain.Result)

	list, err := es.RunEffectList(e.ctx, &driver.RunEffectListParams{RunID: r.ID})
	require.NoError(t, err)
	require.Equal(t, []*driver.Effect{plain, c}, list, "ordered by key")
}

func caseEffectUncertainResolvesBothWays(t *testing.T, f Factory) {
	e := newEnv(t, f)
	es := e.effects()
	a := e.claimOne("a")
	for _, k := range []string{"charge", "refund"} {
		_, err := es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: a.ID, Fence: a.Fence, Key: k})
		require.NoError(t, err)
	}
	b := e.reclaimAndClaim(a, "b")

	_, err := es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: a.ID, Fence: a.Fence, Key: "charge", Result: []byte(`1`)})
	var fe *driver.RunFencedError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, b.Fence, fe.CurrentFence)

	for _, k := range []string{"charge", "refund"} {
		eff, err := es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: b.ID, Fence: b.Fence, Key: k})
		require.NoError(t, err)
		require.Equal(t, driver.EffectUncertain, eff.Outcome)
		require.Equal(t, a.Fence, eff.Fence, "never overwritten")
		require.False(t, eff.Committed)
		_, err = es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: b.ID, Fence: b.Fence, Key: k})
		require.ErrorIs(t, err, driver.ErrFenced, "B did not start it: it must resolve it")
	}

	e.h.Clock.Advance(time.Second)
	done, err := es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: b.ID, Fence: b.Fence, Key: "charge",
		Committed: true, Result: []byte(`"ch_1"`)})
	require.NoError(t, err)
	require.True(t, done.Committed)
	require.Equal(t, b.Fence, done.Fence, "resolved under the current fence")
	require.Equal(t, `"ch_1"`, string(done.Result))
	require.Equal(t, e.h.Clock.Now().UTC(), done.CommittedAt)

	gone, err := es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: b.ID, Fence: b.Fence, Key: "refund"})
	require.NoError(t, err)
	require.False(t, gone.Committed)
	require.Equal(t, a.Fence, gone.Fence, "the removed intent as it was")
	_, err = es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: b.ID, Fence: b.Fence, Key: "refund"})
	require.ErrorIs(t, err, driver.ErrNotFound, "removed")
	eff, err := es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: b.ID, Fence: b.Fence, Key: "refund"})
	require.NoError(t, err)
	require.Equal(t, driver.EffectStarted, eff.Outcome, "a removed intent starts afresh")
	require.Equal(t, b.Fence, eff.Fence)

	_, err = es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: b.ID, Fence: b.Fence, Key: "charge"})
	require.ErrorIs(t, err, driver.ErrConflict)
	_, err = es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: b.ID, Fence: b.Fence, Key: "nope"})
	require.ErrorIs(t, err, driver.ErrNotFound)
	_, err = es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: a.ID, Fence: a.Fence, Key: "refund"})
	require.ErrorIs(t, err, driver.ErrFenced)
	_, err = es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: b.ID + 100, Fence: 1, Key: "refund"})
	require.ErrorIs(t, err, driver.ErrNotFound)
}

// caseEffectBeginRaceStartsOnce: concurrent begins of one key under one
// fence start it once; every other caller finds it uncertain.
func caseEffectBeginRaceStartsOnce(t *testing.T, f Factory) {
	e := newEnv(t, f)
	es := e.effects()
	r := e.claimOne("a")
	for k := range 5 {
		key := fmt.Sprint("k", k)
		var started, uncertain atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				eff, err := es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: key})
				if !assert.NoError(t, err) {
					return
				}
				switch eff.Outcome {
				case driver.EffectStarted:
					started.Add(1)
				case driver.EffectUncertain:
					uncertain.Add(1)
				}
			})
		}
		wg.Wait()
		require.Equal(t, int32(1), started.Load())
		require.Equal(t, int32(7), uncertain.Load())
	}
}

// caseTxRollsBackWhatItRefuses: nothing of a refused transaction is kept —
// neither the caller's writes nor the effect.
func caseTxRollsBackWhatItRefuses(t *testing.T, f Factory) {
	e := newEnv(t, f)
	es := e.effects()
	e.createLedger()
	r := e.claimOne("a")
	calls := 0
	insert := func(k string, fail error) func(tx any) error { return e.ledgerInsert(&calls, k, fail) }
	tp := func(key string) *driver.RunTxParams {
		return &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: key, Result: []byte(`{"booked": true}`)}
	}
	res, err := es.RunTx(e.ctx, tp("book"), insert("a", nil))
	require.NoError(t, err)
	require.Equal(t, &driver.RunTxResult{Effect: &driver.Effect{RunID: r.ID, Key: "book", Fence: r.Fence, Committed: true,
		Result: []byte(`{"booked":true}`), CreatedAt: StartTime, CommittedAt: StartTime}}, res)
	require.Equal(t, 1, e.ledgerRows())

	boom := errors.New("boom")
	_, err = es.RunTx(e.ctx, tp("bad"), insert("b", boom))
	require.ErrorIs(t, err, boom)
	require.Equal(t, 1, e.ledgerRows(), "the caller's write rolled back")
	eff, err := es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "bad"})
	require.NoError(t, err)
	require.Equal(t, driver.EffectStarted, eff.Outcome, "and the effect with it")

	calls = 0
	_, err = es.RunTx(e.ctx, tp("bad"), insert("c", nil))
	require.ErrorIs(t, err, driver.ErrConflict, "a key begun as an effect is not taken over by a transaction")
	require.Zero(t, calls)
	_, err = es.RunTx(e.ctx, tp("dup"), insert("a", nil))
	require.Error(t, err, "the caller's own unique violation")
	require.Equal(t, 1, e.ledgerRows())

	_, err = e.runStore().RunCancel(e.ctx, &driver.RunCancelParams{ID: r.ID, Reason: "operator"})
	require.NoError(t, err)
	_, err = es.RunTx(e.ctx, tp("late"), insert("d", nil))
	require.ErrorIs(t, err, driver.ErrFenced)
	require.Equal(t, 1, e.ledgerRows())
	list, err := es.RunEffectList(e.ctx, &driver.RunEffectListParams{RunID: r.ID})
	require.NoError(t, err)
	require.Len(t, list, 2, "book and the begun intent; none for the refused transactions")
}

// caseTxWhoseFnReleasesItsRunIsRefused: a fn that writes the run's own row
// — releasing the run or moving its fence inside the very transaction that
// commits the effect — is refused with ErrFenced and nothing of the
// transaction is kept, while a fn that touches the row without changing
// the fence or state commits. Found by internal/difftest: Postgres, which
// locks the row before fn, committed both.
func caseTxWhoseFnReleasesItsRunIsRefused(t *testing.T, f Factory) {
	e := newEnv(t, f)
	es := e.effects()
	e.createLedger()
	r := e.claimOne("a")
	calls := 0
	writeRun := func(stmt string) func(tx any) error {
		return func(tx any) error {
			if err := e.ledgerInsert(&calls, stmt, nil)(tx); err != nil {
				return err
			}
			return execTx(e.ctx, tx, stmt, r.ID)
		}
	}
	tp := func(key string) *driver.RunTxParams {
		return &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: key}
	}

	_, err := es.RunTx(e.ctx, tp("touch"), writeRun("UPDATE runs SET reason = 'noted' WHERE id = ?1"))
	require.NoError(t, err, "the fence and state are unchanged")
	for _, c := range []struct {
		stmt  string
		state runs.State // the run as fn left it, which the refusal names
		fence int64
	}{
		{"UPDATE runs SET state = 'available', owner = '', expires_at = NULL WHERE id = ?1", runs.StateAvailable, r.Fence},
		{"UPDATE runs SET fence = fence + 1 WHERE id = ?1", runs.StateRunning, r.Fence + 1},
	} {
		_, err := es.RunTx(e.ctx, tp("release"), writeRun(c.stmt))
		var fe *driver.RunFencedError
		require.ErrorAs(t, err, &fe, c.stmt)
		require.ErrorIs(t, err, driver.ErrFenced)
		require.Equal(t, "effect tx", fe.Op)
		require.Equal(t, c.state, fe.State, c.stmt)
		require.Equal(t, c.fence, fe.CurrentFence, c.stmt)
	}
	require.Equal(t, 1, e.ledgerRows(), "the refused transactions' writes rolled back")
	got, err := e.runStore().RunGet(e.ctx, &driver.RunGetParams{ID: r.ID})
	require.NoError(t, err)
	require.Equal(t, runs.StateRunning, got.State)
	require.Equal(t, r.Fence, got.Fence)
	require.Equal(t, "noted", got.Reason)
	list, err := es.RunEffectList(e.ctx, &driver.RunEffectListParams{RunID: r.ID})
	require.NoError(t, err)
	require.Len(t, list, 1, "touch only")
}

// caseTxConcurrentSameKeyRunsFnOnce: a second transaction of one key waits
// for the first and finds it committed instead of running fn again.
func caseTxConcurrentSameKeyRunsFnOnce(t *testing.T, f Factory) {
	e := newEnv(t, f)
	es := e.effects()
	r := e.claimOne("a")
	var calls, done atomic.Int32
	var wg sync.WaitGroup
	for range 4 { // at most the Postgres reserved pool's default size
		wg.Go(func() {
			res, err := es.RunTx(e.ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: "once"}, func(any) error {
				calls.Add(1)
				return nil
			})
			if assert.NoError(t, err) && res.Done {
				done.Add(1)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int32(1), calls.Load())
	require.Equal(t, int32(3), done.Load())
}

func caseEventsRetriedFencedAndPaged(t *testing.T, f Factory) {
	e := newEnv(t, f)
	es := e.effects()
	e.enqueue(runs.Enqueue{Queue: "q"}, runs.Enqueue{Queue: "q"})
	rs := e.claim("q", "a", 2)
	var batch []driver.RunEventInsert
	for seq := int64(1); seq <= 3; seq++ {
		for _, r := range rs {
			batch = append(batch, driver.RunEventInsert{RunID: r.ID, Fence: r.Fence, Seq: seq, Kind: "step",
				Payload: fmt.Appendf(nil, `{ "seq": %d }`, seq)})
		}
	}
	res, err := es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: batch})
	require.NoError(t, err)
	require.Empty(t, res.Fenced)
	res, err = es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: append(batch, batch[0])})
	require.NoError(t, err)
	require.Empty(t, res.Fenced, "a retried batch (and a repeat within one) is accepted")

	list := func(p driver.RunEventListParams) []*driver.RunEvent {
		t.Helper()
		evs, err := es.RunEventList(e.ctx, &p)
		require.NoError(t, err)
		return evs
	}
	evs := list(driver.RunEventListParams{RunID: rs[1].ID})
	require.Len(t, evs, 3)
	require.Equal(t, &driver.RunEvent{RunID: rs[1].ID, Fence: rs[1].Fence, Seq: 1, Kind: "step", Payload: []byte(`{"seq":1}`),
		CreatedAt: StartTime}, evs[0])
	evs = list(driver.RunEventListParams{RunID: rs[1].ID, AfterFence: rs[1].Fence, AfterSeq: 1, Limit: 1})
	require.Len(t, evs, 1)
	require.Equal(t, int64(2), evs[0].Seq)

	b := e.reclaimAndClaim(rs[0], "b")
	res, err = es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{
		{RunID: b.ID, Fence: b.Fence, Seq: 1, Kind: "step"},
		{RunID: rs[0].ID, Fence: rs[0].Fence, Seq: 4, Kind: "late"},  // fenced
		{RunID: rs[0].ID, Fence: rs[0].Fence, Seq: 1, Kind: "step"},  // stored before: accepted
		{RunID: 9999, Fence: 1, Seq: 1, Kind: "step"},                // no such run: fenced
		{RunID: rs[1].ID, Fence: rs[1].Fence + 1, Seq: 1, Kind: "x"}, // a fence from the future
	}})
	require.NoError(t, err)
	require.Equal(t, []int{1, 3, 4}, res.Fenced)
	evs = list(driver.RunEventListParams{RunID: b.ID})
	require.Len(t, evs, 4)
	require.Equal(t, b.Fence, evs[3].Fence)
	require.Equal(t, "null", string(evs[3].Payload), "an empty payload is JSON null")
	evs = list(driver.RunEventListParams{RunID: b.ID, AfterFence: rs[0].Fence, AfterSeq: 3, Limit: 10})
	require.Len(t, evs, 1, "resume after (fence, seq) crosses into the next fence")
	require.Equal(t, [2]int64{b.Fence, 1}, [2]int64{evs[0].Fence, evs[0].Seq})
	require.Len(t, list(driver.RunEventListParams{RunID: b.ID, Limit: 2}), 2)
}

// caseEventsAcrossChunks crosses the drivers' chunked inserts (full chunks,
// a short tail) with fenced events, a duplicate within the batch and a
// retried batch, and checks the refusals' indexes.
func caseEventsAcrossChunks(t *testing.T, f Factory) {
	e := newEnv(t, f)
	es := e.effects()
	a := e.claimOne("a")
	c := e.claimOne("c")
	var batch []driver.RunEventInsert
	var fenced []int
	for i := range 202 {
		r, fence := a, a.Fence
		switch {
		case i%7 == 3:
			r, fence = c, c.Fence+1 // not c's fence
			fenced = append(fenced, i)
		case i%2 == 1:
			r = c
			fence = c.Fence
		}
		batch = append(batch, driver.RunEventInsert{RunID: r.ID, Fence: fence, Seq: int64(i + 1), Kind: "step", Payload: []byte(`{}`)})
	}
	batch[152] = batch[148] // a duplicate within the batch
	for range 2 {
		res, err := es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: batch})
		require.NoError(t, err)
		require.Equal(t, fenced, res.Fenced)
	}
	var n int
	for _, r := range []*driver.Run{a, c} {
		evs, err := es.RunEventList(e.ctx, &driver.RunEventListParams{RunID: r.ID})
		require.NoError(t, err)
		n += len(evs)
	}
	require.Equal(t, len(batch)-len(fenced)-1, n)
}
