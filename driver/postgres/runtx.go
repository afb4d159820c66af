package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
)

// runTxOp names RunTx in its refusals, as SQLite's does.
const runTxOp = "effect tx"

// runStillHeld is RunTx's fence check after fn, inside its transaction.
const runStillHeld = `SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1 AND fence = $2 AND state = 'running')`

// RunTx implements driver.EffectStore: one READ COMMITTED transaction on
// the critical pool, four round trips besides fn's own — BEGIN; then
// beginEffect with the effect already committed, which locks the run row
// FOR SHARE if the run is running under the fence (held to COMMIT, so a
// reclaim, cancel or completion of the run, each an UPDATE of the row,
// waits for this transaction instead of committing in between) and inserts
// the committed effect unless the key exists; then fn, the fence checked
// again (fn may have written the run's own row), and COMMIT. If fn fails,
// or released the run or moved its fence, the rollback takes the effect
// with fn's writes.
//
// Inserting the effect before fn rather than after it costs nothing and
// serializes two calls of one key: the second waits on the first's
// uncommitted row, then sees it committed (Done, fn not called) or, if the
// first rolled back, goes ahead. Its committed_at is therefore the store
// time of the fence check, just before fn.
//
// fn holds a critical connection while it runs; keep it short (the
// session's idle_in_transaction_session_timeout, Config.StatementTimeout,
// ends a transaction left idle).
func (d *store) RunTx(ctx context.Context, p *driver.RunTxParams, fn func(tx any) error) (*driver.RunTxResult, error) {
	result := p.Result // compact or nil: normalized by driver.Validating
	fail := func(err error) error {
		return fmt.Errorf("postgres: transactional effect %q of run %d: %w", p.Key, p.RunID, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	// Rolls back whatever is left open: a refusal, fn's error, a failed
	// statement, a panic in fn. It reads the connection's status, so it
	// costs nothing after COMMIT.
	defer d.endTx(ctx, conn)

	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, fail(err)
	}
	e, held, err := d.beginEffectOn(ctx, tx, p.RunID, p.Fence, p.Key, true, result)
	if err != nil {
		return nil, fail(err)
	}
	if !held {
		d.endTx(ctx, conn) // release the transaction before the refusal's read
		cur, now, err := readRun(ctx, conn, d.fakeNow(), p.RunID)
		if err != nil {
			return nil, fail(fmt.Errorf("reading the run after a refused write: %w", err))
		}
		return nil, driver.ClassifyRefusal(runTxOp, p.RunID, p.Fence, "", cur, now, false)
	}
	switch e.Outcome {
	case driver.EffectCommitted:
		if err := tx.Commit(ctx); err != nil {
			return nil, fail(fmt.Errorf("commit: %w", err))
		}
		e.Outcome = ""
		return &driver.RunTxResult{Effect: e, Done: true}, nil
	case driver.EffectUncertain:
		return nil, fmt.Errorf("effect tx of %q of run %d refused: an intent begun under fence %d was never committed; resolve it first: %w",
			p.Key, p.RunID, e.Fence, driver.ErrConflict)
	}
	if err := fn(tx); err != nil {
		return nil, fmt.Errorf("postgres: transactional effect %q of run %d: rolled back: %w", p.Key, p.RunID, err)
	}
	// fn's statements run in this transaction, so the row lock taken above
	// does not stop fn itself from releasing the run or moving its fence.
	// The effect is committed only if the run is still running under the
	// fence after fn — the check SQLite makes in its effect INSERT after
	// fn — or nothing of the transaction is kept.
	var still bool
	if err := tx.QueryRow(ctx, runStillHeld, p.RunID, p.Fence).Scan(&still); err != nil {
		return nil, fail(fmt.Errorf("checking the fence after fn: %w", mapWriteError(err)))
	}
	if !still {
		// The refusal names the run as fn left it (read in the
		// transaction, before the rollback), as SQLite's does.
		cur, now, err := readRun(ctx, conn, d.fakeNow(), p.RunID)
		if err != nil {
			return nil, fail(fmt.Errorf("reading the run after a refused write: %w", err))
		}
		return nil, driver.ClassifyRefusal(runTxOp, p.RunID, p.Fence, "", cur, now, false)
	}
	if err := tx.Commit(ctx); err != nil {
		if errors.Is(err, pgx.ErrTxClosed) {
			err = fmt.Errorf("fn ended the transaction itself: %w", err)
		}
		return nil, fail(fmt.Errorf("commit: %w", err))
	}
	e.Outcome = ""
	return &driver.RunTxResult{Effect: e}, nil
}
