package drivertest

import (
	"database/sql"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// The enqueue in the caller's own transaction (RunEnqueueTx): the runs
// exist if and only if the caller's transaction commits, with the
// caller's own rows.

// callerTx opens the caller's transaction and a table of the caller's
// (orders) to write in it.
func (e *env) callerTx() *CallerTx {
	e.t.Helper()
	require.NotNil(e.t, e.h.BeginTx, "the harness opens no caller transaction")
	tx, err := e.h.BeginTx(e.ctx)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = tx.Rollback(e.ctx) }) // after Commit, a no-op error
	return tx
}

func (e *env) ordersTable() {
	e.t.Helper()
	require.NoError(e.t, e.h.Exec(e.ctx, `CREATE TABLE orders (id INTEGER PRIMARY KEY)`))
}

// count is a one-number query.
func (e *env) count(q string) int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.h.Query(e.ctx, q, &n))
	return n
}

func (e *env) enqueueTx(tx *CallerTx, rs ...runs.Enqueue) []driver.RunEnqueued {
	e.t.Helper()
	out, err := e.runStore().RunEnqueueTx(e.ctx, &driver.RunEnqueueTxParams{Tx: tx.Tx, Runs: rs})
	require.NoError(e.t, err)
	require.Len(e.t, out, len(rs))
	return out
}

var enqueueTxCases = []Case{
	{"RunEnqueueTxVisibleOnlyAfterTheCallerCommits", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.ordersTable()
		tx := e.callerTx()
		require.NoError(t, tx.Exec(e.ctx, `INSERT INTO orders (id) VALUES (1)`))
		out := e.enqueueTx(tx, runs.Enqueue{Queue: "q", Payload: []byte(`{"order": 1}`)},
			runs.Enqueue{Queue: "q", UniqueKey: "order-1"}, runs.Enqueue{Queue: "q", Priority: 1})
		for i, r := range out {
			require.False(t, r.Existing)
			require.Equal(t, runs.StateAvailable, r.Run.State)
			if i > 0 {
				require.Greater(t, r.Run.ID, out[i-1].Run.ID, "ids ascend in input order")
			}
		}
		require.Equal(t, `{"order":1}`, string(out[0].Run.Payload))
		_, err := e.runStore().RunGet(e.ctx, &driver.RunGetParams{ID: out[0].Run.ID})
		require.ErrorIs(t, err, driver.ErrNotFound, "not visible before the caller commits")
		require.Zero(t, e.count(`SELECT count(*) FROM runs`))
		require.Zero(t, e.count(`SELECT count(*) FROM orders`))

		require.NoError(t, tx.Commit(e.ctx))
		for _, r := range out {
			require.Equal(t, r.Run, e.run(r.Run.ID), "reads back as enqueued")
		}
		require.Equal(t, 1, e.count(`SELECT count(*) FROM orders`))
		got := e.claim("q", "w", 10)
		require.Len(t, got, 3)
		for i, r := range got {
			require.Equal(t, out[i].Run.ID, r.ID, "claimed in claim order")
		}
	}},
	{"RunEnqueueTxLargeBatchKeepsInputOrder", func(t *testing.T, f Factory) {
		// Long stretches without a key go in as chunks (SQLite: 100 a
		// statement, prepared on the caller's transaction; Postgres:
		// 1,000 an array insert), keyed runs one by one, all in input
		// order, in the caller's one transaction.
		e := newEnv(t, f)
		batch := make([]runs.Enqueue, 2500)
		for i := range batch {
			batch[i] = runs.Enqueue{Queue: "q", Payload: fmt.Appendf(nil, `{"i":%d}`, i)}
			if i%700 == 0 {
				batch[i].UniqueKey = fmt.Sprintf("k%d", i)
			}
		}
		tx := e.callerTx()
		out := e.enqueueTx(tx, batch...)
		require.NoError(t, tx.Commit(e.ctx))
		for i, r := range out {
			require.False(t, r.Existing, "run %d", i)
			require.Equal(t, fmt.Sprintf(`{"i":%d}`, i), string(r.Run.Payload), "run %d", i)
			require.Equal(t, batch[i].UniqueKey, r.Run.UniqueKey, "run %d", i)
			if i > 0 {
				require.Greater(t, r.Run.ID, out[i-1].Run.ID, "ids ascend in input order")
			}
		}
		require.Equal(t, len(batch), e.count(`SELECT count(*) FROM runs`))
		require.Equal(t, out[len(out)-1].Run, e.run(out[len(out)-1].Run.ID))
	}},
	{"RunEnqueueTxRollbackLeavesNoRun", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.ordersTable()
		tx := e.callerTx()
		require.NoError(t, tx.Exec(e.ctx, `INSERT INTO orders (id) VALUES (1)`))
		out := e.enqueueTx(tx, runs.Enqueue{Queue: "q"}, runs.Enqueue{Queue: "q", UniqueKey: "k"})
		require.NoError(t, tx.Rollback(e.ctx))
		for _, r := range out {
			_, err := e.runStore().RunGet(e.ctx, &driver.RunGetParams{ID: r.Run.ID})
			require.ErrorIs(t, err, driver.ErrNotFound)
		}
		require.Zero(t, e.count(`SELECT count(*) FROM runs`))
		require.Zero(t, e.count(`SELECT count(*) FROM orders`))
		require.Empty(t, e.claim("q", "w", 10))
		again := e.enqueue(runs.Enqueue{Queue: "q", UniqueKey: "k"})[0]
		require.False(t, again.Existing, "a rolled-back run never held its key")
	}},
	{"RunEnqueueTxUniqueKeyReturnsTheFirstRun", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		first := e.enqueue(runs.Enqueue{Queue: "q", UniqueKey: "k"})[0].Run
		tx := e.callerTx()
		out := e.enqueueTx(tx, runs.Enqueue{Queue: "q", UniqueKey: "k", Payload: []byte(`"other"`)},
			runs.Enqueue{Queue: "q", UniqueKey: "k2"}, runs.Enqueue{Queue: "q", UniqueKey: "k2"})
		require.True(t, out[0].Existing)
		require.Equal(t, first, out[0].Run, "the committed run, untouched")
		require.False(t, out[1].Existing)
		require.True(t, out[2].Existing, "a duplicate within one batch")
		require.Equal(t, out[1].Run.ID, out[2].Run.ID)
		require.NoError(t, tx.Commit(e.ctx))
		require.Len(t, e.claim("q", "w", 10), 2)
	}},
	{"RunEnqueueTxRefusesBadInputChangingNothing", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		one := []runs.Enqueue{{Queue: "q"}}
		for name, p := range map[string]*driver.RunEnqueueTxParams{
			"no transaction":           {Runs: one},
			"a nil *sql.Tx":            {Tx: (*sql.Tx)(nil), Runs: one},
			"a nil pgx.Tx":             {Tx: pgx.Tx(nil), Runs: one},
			"a nil *pgxpool.Tx":        {Tx: (*pgxpool.Tx)(nil), Runs: one},
			"not a transaction":        {Tx: "BEGIN", Runs: one},
			"another store's kind":     {Tx: &struct{ Tx any }{}, Runs: one},
			"empty batch, no tx":       {},
			"empty batch, a wrong one": {Tx: 42},
		} {
			_, err := rs.RunEnqueueTx(e.ctx, p)
			require.ErrorIs(t, err, driver.ErrInvalid, name)
		}

		tx := e.callerTx()
		_, err := rs.RunEnqueueTx(e.ctx, &driver.RunEnqueueTxParams{Tx: tx.Tx, Runs: []runs.Enqueue{{Queue: "q"}, {Queue: ""}}})
		require.ErrorIs(t, err, driver.ErrInvalid, "one invalid run refuses the batch")
		got, err := rs.RunEnqueueTx(e.ctx, &driver.RunEnqueueTxParams{Tx: tx.Tx})
		require.NoError(t, err, "an empty batch in a good transaction")
		require.Empty(t, got)
		require.NoError(t, tx.Commit(e.ctx), "a refusal leaves the caller's transaction usable")

		_, err = rs.RunEnqueueTx(e.ctx, &driver.RunEnqueueTxParams{Tx: tx.Tx, Runs: one})
		require.ErrorIs(t, err, driver.ErrInvalid, "a committed transaction")
		_, err = rs.RunEnqueueTx(e.ctx, &driver.RunEnqueueTxParams{Tx: tx.Tx})
		require.ErrorIs(t, err, driver.ErrInvalid, "a committed transaction, empty batch")
		require.Zero(t, e.count(`SELECT count(*) FROM runs`))
		require.Empty(t, e.claim("q", "w", 10))
	}},
	{"RunEnqueueTxUniqueKeyRaceWaitsForTheCallersOutcome", func(t *testing.T, f Factory) {
		// An enqueue of a key the caller's open transaction took returns
		// the caller's run once it commits, or inserts its own once it
		// rolls back: never two runs for one key, whichever order the
		// two happen to reach the store in.
		for _, commit := range []bool{true, false} {
			e := newEnv(t, f)
			tx := e.callerTx()
			mine := e.enqueueTx(tx, runs.Enqueue{Queue: "q", UniqueKey: "k"})[0].Run
			done := make(chan driver.RunEnqueued, 1)
			go func() {
				out, err := e.runStore().RunEnqueue(e.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", UniqueKey: "k"}}})
				if assert.NoError(t, err) {
					done <- out[0]
				}
				close(done)
			}()
			if commit {
				require.NoError(t, tx.Commit(e.ctx))
			} else {
				require.NoError(t, tx.Rollback(e.ctx))
			}
			other, ok := <-done
			require.True(t, ok)
			require.Equal(t, commit, other.Existing, "commit=%v", commit)
			if commit {
				require.Equal(t, mine.ID, other.Run.ID)
			}
			require.Equal(t, 1, e.count(`SELECT count(*) FROM runs`), "commit=%v", commit)
		}
	}},
}
