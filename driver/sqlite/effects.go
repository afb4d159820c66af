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

var _ driver.EffectStore = (*store)(nil)

// The effect ledger (SPEC §3). Each method is one BEGIN IMMEDIATE
// transaction on the single writer: the run's fence is checked first (a
// fenced runner learns nothing and changes nothing), and every write
// states the fence again in its own WHERE (effects_stmts.go), so no write
// depends on a Go-side check alone.

// scanEffect reads one row of effectColumns. A NULL committed_at becomes
// the zero time and a NULL result nil.
func scanEffect(r rowScanner) (*driver.Effect, error) {
	var e driver.Effect
	var committed int64
	var created int64
	var committedAt sql.NullInt64
	if err := r.Scan(&e.RunID, &e.Key, &e.Fence, &committed, &e.Result, &created, &committedAt); err != nil {
		return nil, err
	}
	e.Committed = committed != 0
	e.CreatedAt = fromMicros(created)
	if committedAt.Valid {
		e.CommittedAt = fromMicros(committedAt.Int64)
	}
	if len(e.Result) == 0 {
		e.Result = nil
	}
	return &e, nil
}

// inWriteTx runs body in one BEGIN IMMEDIATE transaction on the writer and
// commits if body returns nil; otherwise nothing body wrote is kept. The
// statements are prepared before BeginTx (see effectPrepared), and now is
// read under the writer lock, so it is ordered with every other write.
func (d *store) inWriteTx(ctx context.Context, what string, body func(tx *sql.Tx, st *effectStmts, now time.Time) error) error {
	st, err := d.effectPrepared(ctx)
	if err != nil {
		return err
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: %s: begin: %w", what, err)
	}
	defer tx.Rollback()
	if err := body(tx, st, journal.NormalizeTime(d.clock.Now())); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: %s: commit: %w", what, err)
	}
	return nil
}

// requireHeld checks in tx that run id is running under fence, and
// otherwise explains why not: ErrNotFound, or a *driver.RunFencedError.
func requireHeld(ctx context.Context, tx *sql.Tx, st *effectStmts, op string, id, fence int64, now time.Time) error {
	var held bool
	if err := tx.StmtContext(ctx, st.held).QueryRowContext(ctx, id, fence).Scan(&held); err != nil {
		return fmt.Errorf("sqlite: %s of run %d: checking the fence: %w", op, id, err)
	}
	if held {
		return nil
	}
	return refuseRun(ctx, tx, st, op, id, fence, now)
}

// refuseRun explains a fenced write refused because of its run, from the
// run as tx reads it.
func refuseRun(ctx context.Context, tx *sql.Tx, st *effectStmts, op string, id, fence int64, now time.Time) error {
	cur, err := runInTx(ctx, tx.StmtContext(ctx, st.run.selectByID), id)
	if err != nil {
		return fmt.Errorf("sqlite: %s of run %d: reading the refused run: %w", op, id, err)
	}
	return driver.ClassifyRefusal(op, id, fence, "", cur, now, false)
}

// effectInTx reads effect (id, key) in tx; nil (and no error) if absent.
func effectInTx(ctx context.Context, tx *sql.Tx, st *effectStmts, id int64, key string) (*driver.Effect, error) {
	e, err := scanEffect(tx.StmtContext(ctx, st.selectEffect).QueryRowContext(ctx, id, key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading effect %q of run %d: %w", key, id, err)
	}
	return e, nil
}

// RunEffectBegin implements driver.EffectStore. Two begins of one key under
// one fence serialize on the writer: the first starts it, the second finds
// the intent and reports it uncertain.
func (d *store) RunEffectBegin(ctx context.Context, p *driver.RunEffectParams) (*driver.Effect, error) {
	const op = "effect begin"
	var out *driver.Effect
	err := d.inWriteTx(ctx, op, func(tx *sql.Tx, st *effectStmts, now time.Time) error {
		if err := requireHeld(ctx, tx, st, op, p.RunID, p.Fence, now); err != nil {
			return err
		}
		e, err := effectInTx(ctx, tx, st, p.RunID, p.Key)
		if err != nil {
			return err
		}
		if e != nil {
			// Found: committed, or an intent nobody committed (under an older
			// fence, or this one after a failed invocation). Never modified.
			e.Outcome = driver.EffectUncertain
			if e.Committed {
				e.Outcome = driver.EffectCommitted
			}
			out = e
			return nil
		}
		e, err = scanEffect(tx.StmtContext(ctx, st.insertIntent).QueryRowContext(ctx,
			p.RunID, p.Key, p.Fence, now.UnixMicro()))
		if errors.Is(err, sql.ErrNoRows) { // cannot happen after requireHeld in this transaction
			return refuseRun(ctx, tx, st, op, p.RunID, p.Fence, now)
		}
		if err != nil {
			return fmt.Errorf("sqlite: %s %q of run %d: %w", op, p.Key, p.RunID, err)
		}
		e.Outcome = driver.EffectStarted
		out = e
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RunEffectCommit implements driver.EffectStore: one conditional UPDATE
// whose WHERE is the whole precondition (this fence's uncommitted intent,
// the run held under this fence); only if it matched nothing, the refusal
// is explained from the run and the effect as the same transaction reads
// them:
//   - the run is missing: ErrNotFound; not held under Fence: a
//     *driver.RunFencedError (ErrFenced);
//   - the effect is already committed under this same fence: ErrConflict
//     (a repeated commit, not a lost lease — the runner still holds its
//     run, so it must not be told to stop);
//   - no intent, an intent under another fence, or an effect committed
//     under another fence: ErrFenced (this fence does not own the intent).
func (d *store) RunEffectCommit(ctx context.Context, p *driver.RunEffectCommitParams) (*driver.Effect, error) {
	result := p.Result // compact or nil: normalized by driver.Validating
	const op = "effect commit"
	var out *driver.Effect
	err := d.inWriteTx(ctx, op, func(tx *sql.Tx, st *effectStmts, now time.Time) error {
		e, err := scanEffect(tx.StmtContext(ctx, st.commit).QueryRowContext(ctx,
			nullBytes(result), now.UnixMicro(), p.RunID, p.Key, p.Fence))
		if err == nil {
			out = e
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: %s %q of run %d: %w", op, p.Key, p.RunID, err)
		}
		if err := requireHeld(ctx, tx, st, op, p.RunID, p.Fence, now); err != nil {
			return err
		}
		e, err = effectInTx(ctx, tx, st, p.RunID, p.Key)
		if err != nil {
			return err
		}
		return refuseEffectCommit(p, e)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// refuseEffectCommit explains a commit refused while the run is held under
// its fence, from the effect as it is (nil if absent).
func refuseEffectCommit(p *driver.RunEffectCommitParams, e *driver.Effect) error {
	what := fmt.Sprintf("effect commit of %q of run %d under fence %d refused", p.Key, p.RunID, p.Fence)
	switch {
	case e == nil:
		return fmt.Errorf("%s: no intent under this fence (begin it first): %w", what, driver.ErrFenced)
	case e.Committed && e.Fence == p.Fence:
		return fmt.Errorf("%s: already committed under this fence: %w", what, driver.ErrConflict)
	case e.Committed:
		return fmt.Errorf("%s: committed under fence %d: %w", what, e.Fence, driver.ErrFenced)
	default:
		return fmt.Errorf("%s: the intent was started under fence %d and is uncertain to this one: %w",
			what, e.Fence, driver.ErrFenced)
	}
}

// RunEffectResolve implements driver.EffectStore. Committed: the intent
// becomes committed with Result, and its fence the resolver's. Otherwise
// the intent is deleted and the row as it was is returned (Committed
// false); Result is then validated but not stored. ErrNotFound if there is
// no such effect, ErrConflict if it is already committed.
func (d *store) RunEffectResolve(ctx context.Context, p *driver.RunEffectResolveParams) (*driver.Effect, error) {
	result := p.Result // compact or nil: normalized by driver.Validating
	const op = "effect resolve"
	var out *driver.Effect
	err := d.inWriteTx(ctx, op, func(tx *sql.Tx, st *effectStmts, now time.Time) error {
		if err := requireHeld(ctx, tx, st, op, p.RunID, p.Fence, now); err != nil {
			return err
		}
		e, err := effectInTx(ctx, tx, st, p.RunID, p.Key)
		if err != nil {
			return err
		}
		if e == nil {
			return fmt.Errorf("effect %q of run %d: %w", p.Key, p.RunID, driver.ErrNotFound)
		}
		if e.Committed {
			return fmt.Errorf("%s of %q of run %d refused: already committed under fence %d: %w",
				op, p.Key, p.RunID, e.Fence, driver.ErrConflict)
		}
		var row *sql.Row
		if p.Committed {
			row = tx.StmtContext(ctx, st.resolveCommit).QueryRowContext(ctx,
				nullBytes(result), now.UnixMicro(), p.RunID, p.Key, p.Fence)
		} else {
			row = tx.StmtContext(ctx, st.resolveDelete).QueryRowContext(ctx, p.RunID, p.Key, p.Fence)
		}
		if out, err = scanEffect(row); err != nil {
			// No row cannot happen after the checks above in this transaction.
			return fmt.Errorf("sqlite: %s %q of run %d: %w", op, p.Key, p.RunID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RunEffectList implements driver.EffectStore, on the read pool. Keys are
// ordered bytewise (SQLite's BINARY collation). A run without effects, or
// no run, gives none.
func (d *store) RunEffectList(ctx context.Context, p *driver.RunEffectListParams) ([]*driver.Effect, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+effectColumns+` FROM run_effects WHERE run_id = ? ORDER BY key`, p.RunID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing effects of run %d: %w", p.RunID, err)
	}
	defer rows.Close()
	var out []*driver.Effect
	for rows.Next() {
		e, err := scanEffect(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: listing effects of run %d: %w", p.RunID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: listing effects of run %d: %w", p.RunID, err)
	}
	return out, nil
}
