package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// runUpdate is one single-run write.
type runUpdate struct {
	op string // for errors: "renew", "complete", …
	id int64
	// stmt picks the conditional UPDATE … RETURNING whose WHERE states every
	// precondition of the write (the fence, for a runner's write).
	stmt func(*runStmts) *sql.Stmt
	// args are its arguments at store time now.
	args func(now time.Time) []any
	// refuse explains a write that matched no row, from the run as the same
	// transaction reads it (cur is nil if the run does not exist).
	refuse func(cur *driver.Run, now time.Time) error
}

// updateRun carries out u under BEGIN IMMEDIATE (the single writer): the
// conditional UPDATE and, only if it matched no row, a read of the run in
// the same transaction, so the refusal describes the row exactly as the
// UPDATE saw it. A refused write commits nothing.
func (d *store) updateRun(ctx context.Context, u runUpdate) (*driver.Run, error) {
	st, err := d.runPrepared(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s run %d: begin: %w", u.op, u.id, err)
	}
	defer tx.Rollback()
	now := journal.NormalizeTime(d.clock.Now()) // read under the writer lock
	// An UPDATE … RETURNING makes all its changes on its first step, so
	// QueryRow (which reads one row and closes) applies it in full.
	r, err := scanRun(tx.StmtContext(ctx, u.stmt(st)).QueryRowContext(ctx, u.args(now)...))
	if errors.Is(err, sql.ErrNoRows) {
		cur, err := runInTx(ctx, tx.StmtContext(ctx, st.selectByID), u.id)
		if err != nil {
			return nil, fmt.Errorf("sqlite: %s run %d: reading the refused run: %w", u.op, u.id, err)
		}
		return nil, u.refuse(cur, now)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s run %d: %w", u.op, u.id, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: %s run %d: commit: %w", u.op, u.id, err)
	}
	return r, nil
}

// fencedRefusal is the refusal of a runner's write: ErrNotFound, ErrFenced
// or (renew only) ErrLeaseExpired, as driver.ClassifyRefusal decides.
func fencedRefusal(op string, id, fence int64, owner string, renew bool) func(*driver.Run, time.Time) error {
	return func(cur *driver.Run, now time.Time) error {
		return driver.ClassifyRefusal(op, id, fence, owner, cur, now, renew)
	}
}

// nullBytes stores an absent optional BLOB as NULL.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}
