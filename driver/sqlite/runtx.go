package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// RunTx implements driver.EffectStore. One BEGIN IMMEDIATE transaction on
// the single writer holds SQLite's write lock from the fence check to the
// commit, so no claim, reclaim or cancel (nor any other process's write)
// can commit in between: SQLite's equivalent of Postgres's SELECT … FOR
// SHARE. fn's statements run on the writer connection inside it (another
// connection to the file would wait on the lock this transaction holds).
// The effect is inserted after fn, its WHERE checking the fence again
// (whatever fn did to the run meanwhile), then COMMIT.
func (d *store) RunTx(ctx context.Context, p *driver.RunTxParams, fn func(tx any) error) (*driver.RunTxResult, error) {
	result := p.Result     // compact or nil: normalized by driver.Validating
	const op = "effect tx" // as Postgres names it
	var out driver.RunTxResult
	err := d.inWriteTx(ctx, op, func(tx *sql.Tx, st *effectStmts, now time.Time) error {
		if err := requireHeld(ctx, tx, st, op, p.RunID, p.Fence, now); err != nil {
			return err
		}
		e, err := effectInTx(ctx, tx, st, p.RunID, p.Key)
		if err != nil {
			return err
		}
		if e != nil && e.Committed {
			out = driver.RunTxResult{Effect: e, Done: true}
			return nil // commits the transaction, which wrote nothing
		}
		if e != nil {
			return fmt.Errorf("tx of effect %q of run %d refused: an intent started under fence %d is uncommitted "+
				"(the key was used with an effect: resolve it): %w", p.Key, p.RunID, e.Fence, driver.ErrConflict)
		}
		if err := fn(tx); err != nil {
			return fmt.Errorf("tx of effect %q of run %d: %w", p.Key, p.RunID, err)
		}
		e, err = scanEffect(tx.StmtContext(ctx, st.insertCommitted).QueryRowContext(ctx,
			p.RunID, p.Key, p.Fence, nullBytes(result), now.UnixMicro()))
		if errors.Is(err, sql.ErrNoRows) {
			// fn's own statements released the run (or moved its fence):
			// nothing of the transaction is kept.
			return refuseRun(ctx, tx, st, op, p.RunID, p.Fence, now)
		}
		if err != nil {
			return fmt.Errorf("sqlite: tx of effect %q of run %d: committing the effect: %w", p.Key, p.RunID, err)
		}
		out = driver.RunTxResult{Effect: e}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
