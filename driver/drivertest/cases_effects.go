package drivertest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

func (e *env) effects() driver.EffectStore {
	e.t.Helper()
	es, ok := e.d.(driver.EffectStore)
	require.True(e.t, ok, "driver %s does not implement driver.EffectStore", e.d.Name())
	return es
}

// claimOne enqueues and claims one run for owner.
func (e *env) claimOne(owner string) *driver.Run {
	e.t.Helper()
	e.enqueue(runs.Enqueue{Queue: "q"})
	got := e.claim("q", owner, 1)
	require.Len(e.t, got, 1)
	return got[0]
}

// reclaimAndReclaim expires r's lease, reclaims it and claims it for owner.
func (e *env) reclaimAndClaim(r *driver.Run, owner string) *driver.Run {
	e.t.Helper()
	e.h.Clock.Advance(runLease)
	res, err := e.runStore().RunReclaim(e.ctx, &driver.RunReclaimParams{})
	require.NoError(e.t, err)
	require.NotEmpty(e.t, res.Reclaimed)
	got := e.claim("q", owner, 1)
	require.Len(e.t, got, 1)
	require.Equal(e.t, r.ID, got[0].ID)
	return got[0]
}

// execTx runs one statement in the caller's transaction, whichever driver
// handed it over (pgx.Tx on Postgres, *sql.Tx on SQLite).
func execTx(ctx context.Context, tx any, q string, args ...any) error {
	switch tx := tx.(type) {
	case pgx.Tx:
		q = strings.NewReplacer("?1", "$1", "?2", "$2").Replace(q)
		_, err := tx.Exec(ctx, q, args...)
		return err
	case *sql.Tx:
		_, err := tx.ExecContext(ctx, q, args...)
		return err
	}
	return fmt.Errorf("unexpected transaction type %T", tx)
}

// createLedger creates the caller's table of the transactional cases.
func (e *env) createLedger() {
	e.t.Helper()
	require.NoError(e.t, e.h.Exec(e.ctx, "CREATE TABLE caller_ledger (k TEXT PRIMARY KEY, v BIGINT NOT NULL)"))
}

// ledgerInsert is a RunTx fn that counts its call in *calls, inserts
// (k, *calls) into caller_ledger, then returns fail.
func (e *env) ledgerInsert(calls *int, k string, fail error) func(tx any) error {
	return func(tx any) error {
		*calls++
		if err := execTx(e.ctx, tx, "INSERT INTO caller_ledger (k, v) VALUES (?1, ?2)", k, int64(*calls)); err != nil {
			return err
		}
		return fail
	}
}

func (e *env) ledgerRows() int {
	e.t.Helper()
	var n int
	err := e.h.Query(e.ctx, "SELECT count(*) FROM caller_ledger", &n)
	require.NoError(e.t, err)
	return n
}

var effectCases = []Case{
	{"EffectStartsOnceThenReturnsTheCommittedResult", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		es := e.effects()
		r := e.claimOne("a")
		p := &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "charge"}
		eff, err := es.RunEffectBegin(e.ctx, p)
		require.NoError(t, err)
		require.Equal(t, driver.EffectStarted, eff.Outcome)
		require.Equal(t, r.Fence, eff.Fence)
		got, err := es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "charge", Result: []byte(` {"id": "ch_1"} `)})
		require.NoError(t, err)
		require.True(t, got.Committed)
		eff, err = es.RunEffectBegin(e.ctx, p)
		require.NoError(t, err)
		require.Equal(t, driver.EffectCommitted, eff.Outcome)
		require.Equal(t, `{"id":"ch_1"}`, string(eff.Result))
		list, err := es.RunEffectList(e.ctx, &driver.RunEffectListParams{RunID: r.ID})
		require.NoError(t, err)
		require.Len(t, list, 1)
	}},
	{"EffectWithoutCommitIsUncertainEvenUnderTheSameFence", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		es := e.effects()
		r := e.claimOne("a")
		p := &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "email"}
		_, err := es.RunEffectBegin(e.ctx, p)
		require.NoError(t, err)
		eff, err := es.RunEffectBegin(e.ctx, p)
		require.NoError(t, err)
		require.Equal(t, driver.EffectUncertain, eff.Outcome, "a started effect may have happened")
	}},
	{"EffectIntentOfAReclaimedHolderIsUncertainNeverOverwritten", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		es := e.effects()
		a := e.claimOne("a")
		_, err := es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: a.ID, Fence: a.Fence, Key: "charge"})
		require.NoError(t, err)
		_, err = es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: a.ID, Fence: a.Fence, Key: "refund"})
		require.NoError(t, err)
		b := e.reclaimAndClaim(a, "b")

		// A's commit after losing the run is refused and changes nothing.
		_, err = es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: a.ID, Fence: a.Fence, Key: "charge", Result: []byte(`1`)})
		require.ErrorIs(t, err, driver.ErrFenced)
		_, err = es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: a.ID, Fence: a.Fence, Key: "other"})
		require.ErrorIs(t, err, driver.ErrFenced)

		for _, key := range []string{"charge", "refund"} {
			eff, err := es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: b.ID, Fence: b.Fence, Key: key})
			require.NoError(t, err)
			require.Equal(t, driver.EffectUncertain, eff.Outcome, key)
			require.Equal(t, a.Fence, eff.Fence, "the intent keeps A's fence")
			require.False(t, eff.Committed)
		}
		// B reconciles: the charge happened, the refund did not.
		got, err := es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: b.ID, Fence: b.Fence, Key: "charge", Committed: true, Result: []byte(`"ch_1"`)})
		require.NoError(t, err)
		require.True(t, got.Committed)
		_, err = es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: b.ID, Fence: b.Fence, Key: "refund"})
		require.NoError(t, err)
		_, err = es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: b.ID, Fence: b.Fence, Key: "charge"})
		require.ErrorIs(t, err, driver.ErrConflict, "a committed effect is never reopened")
		eff, err := es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: b.ID, Fence: b.Fence, Key: "charge"})
		require.NoError(t, err)
		require.Equal(t, driver.EffectCommitted, eff.Outcome)
		eff, err = es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: b.ID, Fence: b.Fence, Key: "refund"})
		require.NoError(t, err)
		require.Equal(t, driver.EffectStarted, eff.Outcome)
		require.Equal(t, b.Fence, eff.Fence)
		_, err = es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: b.ID, Fence: b.Fence, Key: "refund"})
		require.NoError(t, err)
		// A cannot resolve either.
		_, err = es.RunEffectResolve(e.ctx, &driver.RunEffectResolveParams{RunID: a.ID, Fence: a.Fence, Key: "refund"})
		require.ErrorIs(t, err, driver.ErrFenced)
	}},
	{"EffectRefusesBadInputAndUnheldRuns", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		es := e.effects()
		r := e.claimOne("a")
		for i, p := range []driver.RunEffectParams{
			{RunID: r.ID, Fence: r.Fence, Key: ""},
			{RunID: r.ID, Fence: r.Fence, Key: strings.Repeat("k", 300)},
			{RunID: r.ID, Fence: r.Fence, Key: "a\x00b"},
			{RunID: 0, Fence: r.Fence, Key: "k"},
			{RunID: r.ID, Fence: 0, Key: "k"},
		} {
			_, err := es.RunEffectBegin(e.ctx, &p)
			require.ErrorIs(t, err, driver.ErrInvalid, "case %d", i)
		}
		_, err := es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "k"})
		require.NoError(t, err)
		_, err = es.RunEffectCommit(e.ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "k", Result: []byte(`{`)})
		require.ErrorIs(t, err, driver.ErrInvalid)
		_, err = es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence + 1, Key: "k2"})
		require.ErrorIs(t, err, driver.ErrFenced, "a fence from the future")
		_, err = es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: r.ID + 1000, Fence: 1, Key: "k"})
		require.ErrorIs(t, err, driver.ErrNotFound)
		_, err = e.runStore().RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence})
		require.NoError(t, err)
		_, err = es.RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "late"})
		require.ErrorIs(t, err, driver.ErrFenced, "a completed run takes no effects")
		list, err := es.RunEffectList(e.ctx, &driver.RunEffectListParams{RunID: r.ID})
		require.NoError(t, err)
		require.Len(t, list, 1, "nothing but the one valid intent")
	}},
	{"TxCommitsCallerWritesWithTheEffectExactlyOnce", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		es := e.effects()
		e.createLedger()
		r := e.claimOne("a")
		calls := 0
		callerFailed := errors.New("caller failed after writing")
		write := func(k string, fail bool) func(tx any) error {
			if fail {
				return e.ledgerInsert(&calls, k, callerFailed)
			}
			return e.ledgerInsert(&calls, k, nil)
		}
		res, err := es.RunTx(e.ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: "book", Result: []byte(`"ok"`)}, write("book", false))
		require.NoError(t, err)
		require.False(t, res.Done)
		require.True(t, res.Effect.Committed)
		res, err = es.RunTx(e.ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: "book"}, write("book-again", false))
		require.NoError(t, err)
		require.True(t, res.Done, "a committed key is not run again")
		require.Equal(t, 1, calls)

		_, err = es.RunTx(e.ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: "bad"}, write("bad", true))
		require.ErrorContains(t, err, "caller failed")
		require.Equal(t, 1, e.ledgerRows(), "the caller's write rolled back with the transaction")
		list, err := es.RunEffectList(e.ctx, &driver.RunEffectListParams{RunID: r.ID})
		require.NoError(t, err)
		require.Len(t, list, 1, "no effect recorded for the failed transaction")

		b := e.reclaimAndClaim(r, "b")
		calls = 0
		_, err = es.RunTx(e.ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: "late"}, write("late", false))
		require.ErrorIs(t, err, driver.ErrFenced)
		require.Zero(t, calls, "a fenced-out holder's transaction never runs its writes")
		res, err = es.RunTx(e.ctx, &driver.RunTxParams{RunID: b.ID, Fence: b.Fence, Key: "late"}, write("late", false))
		require.NoError(t, err)
		require.False(t, res.Done)
		require.Equal(t, 2, e.ledgerRows())
	}},
	{"EventsAreFencedOrderedAndNeverDuplicated", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		es := e.effects()
		e.enqueue(runs.Enqueue{Queue: "q"}, runs.Enqueue{Queue: "q"})
		rs := e.claim("q", "a", 2)
		var batch []driver.RunEventInsert
		for seq := int64(1); seq <= 3; seq++ {
			for _, r := range rs {
				batch = append(batch, driver.RunEventInsert{RunID: r.ID, Fence: r.Fence, Seq: seq, Kind: "step",
					Payload: []byte(fmt.Sprintf(`{"seq": %d}`, seq))})
			}
		}
		res, err := es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: batch})
		require.NoError(t, err)
		require.Empty(t, res.Fenced)
		res, err = es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: batch})
		require.NoError(t, err)
		require.Empty(t, res.Fenced, "a retried batch is accepted and adds nothing")
		evs, err := es.RunEventList(e.ctx, &driver.RunEventListParams{RunID: rs[0].ID})
		require.NoError(t, err)
		require.Len(t, evs, 3)
		for i, ev := range evs {
			require.Equal(t, int64(i+1), ev.Seq)
			require.Equal(t, fmt.Sprintf(`{"seq":%d}`, i+1), string(ev.Payload))
		}
		evs, err = es.RunEventList(e.ctx, &driver.RunEventListParams{RunID: rs[0].ID, AfterFence: rs[0].Fence, AfterSeq: 2})
		require.NoError(t, err)
		require.Len(t, evs, 1, "resume after a sequence number")

		b := e.reclaimAndClaim(rs[0], "b")
		e.h.Clock.Advance(time.Second)
		res, err = es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{
			{RunID: rs[0].ID, Fence: rs[0].Fence, Seq: 4, Kind: "late", Payload: []byte(`{}`)},
			{RunID: b.ID, Fence: b.Fence, Seq: 1, Kind: "step", Payload: []byte(`{}`)},
		}})
		require.NoError(t, err)
		require.Equal(t, []int{0}, res.Fenced, "the old holder's event is refused; the new holder's is not")
		evs, err = es.RunEventList(e.ctx, &driver.RunEventListParams{RunID: rs[0].ID})
		require.NoError(t, err)
		require.Len(t, evs, 4, "3 under the old fence, 1 under the new, in (fence, seq) order")
		require.Equal(t, b.Fence, evs[3].Fence)
	}},
	{"EventsRefuseBadInput", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		es := e.effects()
		r := e.claimOne("a")
		good := driver.RunEventInsert{RunID: r.ID, Fence: r.Fence, Seq: 1, Kind: "k", Payload: []byte(`{}`)}
		for i, bad := range []driver.RunEventInsert{
			{RunID: r.ID, Fence: r.Fence, Seq: 0, Kind: "k"},
			{RunID: r.ID, Fence: r.Fence, Seq: 2, Kind: "bad kind"},
			{RunID: r.ID, Fence: r.Fence, Seq: 2, Kind: "k", Payload: []byte(`{"a":`)},
			{RunID: r.ID, Fence: 0, Seq: 2, Kind: "k"},
		} {
			_, err := es.RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{good, bad}})
			require.ErrorIs(t, err, driver.ErrInvalid, "case %d", i)
		}
		evs, err := es.RunEventList(e.ctx, &driver.RunEventListParams{RunID: r.ID})
		require.NoError(t, err)
		require.Empty(t, evs, "a batch with one bad event writes none of it")
	}},
}
