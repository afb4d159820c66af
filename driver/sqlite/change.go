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

// planFunc plans a change from the locked head at store time now; q reads
// what the plan may depend on besides the head, inside the transaction.
type planFunc func(w *driver.World, now time.Time, q *headQueries) (journal.Plan, error)

// headQueries are the reads a plan makes under the write lock.
type headQueries struct {
	// rejected reports whether an append.rejected for holder is already
	// journaled in the head's epoch.
	rejected func(holder string) bool
	// appended finds the position a key was appended at in this world
	// (the key rule of journal.PlanAppendKeyed).
	appended journal.KeyLookup
}

// change is the one path by which a world's journal and head change:
// BEGIN IMMEDIATE (the single writer), read the head, plan, one conditional
// head UPDATE that re-asserts the plan's Cond, insert the entries, commit.
func (d *store) change(ctx context.Context, worldID, op string, plan planFunc) (*driver.World, error) {
	st, err := d.prepared(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: begin: %w", op, worldID, err)
	}
	defer tx.Rollback()
	w, err := scanWorld(tx.StmtContext(ctx, st.selectWorld).QueryRowContext(ctx, worldID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("world %q: %w", worldID, driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: reading head: %w", op, worldID, err)
	}
	now := d.clock.Now()
	var qerr error
	rejected := func(holder string) bool {
		var one int
		err := tx.StmtContext(ctx, st.selectRejection).QueryRowContext(ctx, worldID, w.Epoch, holder).Scan(&one)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			qerr = err
		}
		return err == nil
	}
	appended := func(key string) (int64, bool) {
		var pos int64
		err := tx.StmtContext(ctx, st.selectKey).QueryRowContext(ctx, worldID, key).Scan(&pos)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			qerr = err
		}
		return pos, err == nil
	}
	p, err := plan(w, now, &headQueries{rejected: rejected, appended: appended})
	if qerr != nil {
		return nil, fmt.Errorf("sqlite: %s %s: reading rejections or keys: %w", op, worldID, qerr)
	}
	if err != nil {
		return nil, err
	}
	if p.Empty() {
		return w, nil
	}
	// A grant or handoff carries the grantee's registered key, read under
	// the write lock (no lookup for anything else).
	if err := journal.BindKeys(&p, func(node string) ([]byte, error) { return nodeKey(ctx, tx, node) }); err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: %w", op, worldID, err)
	}
	if err := writePlan(ctx, tx, st, &p); err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: %w", op, worldID, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: commit: %w", op, worldID, err)
	}
	after := *w
	after.State = p.After
	return &after, nil
}

// condUpdate is the conditional write. Its WHERE is journal.Cond: the
// position compare-and-swap, the fence (epoch and holder), the expiry on the
// store clock and the seen position. If it matches no row, nothing of the
// plan is written.
const condUpdate = `
UPDATE worlds SET
    position = ?1, last_hash = ?2, last_time = ?3, epoch = ?4, holder = ?5,
    term_us = ?6, expires_at = ?7, granted_position = ?8, holder_key = ?17
WHERE id = ?9
  AND position = ?10
  AND epoch = ?11
  AND (?12 = 0 OR holder = ?13)
  AND (?14 = 0 OR (?14 = 1 AND expires_at > ?15) OR (?14 = 2 AND expires_at <= ?15))
  AND granted_position <= ?16`

// errCondFailed means the conditional write matched no row although the
// planner, holding the lock, found its preconditions true: the Go rule and
// the SQL rule disagree. It is reported as a fenced write, never applied.
var errCondFailed = fmt.Errorf("conditional head write matched no row: %w", driver.ErrFenced)

func writePlan(ctx context.Context, tx *sql.Tx, st *stmts, p *journal.Plan) error {
	a, c := p.After, p.Cond
	res, err := tx.StmtContext(ctx, st.condUpdate).ExecContext(ctx,
		a.Position, nonNil(a.LastHash), a.LastTime.UnixMicro(), a.Epoch, a.Holder,
		int64(a.Term/time.Microsecond), expiresArg(a), a.GrantedAt,
		a.World, c.Position, c.Epoch, boolInt(c.CheckHolder), c.Holder, int(c.Expiry), c.Now.UnixMicro(), c.MaxGrantedAt, nonNil(a.HolderKey))
	if err != nil {
		return fmt.Errorf("conditional head write: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errCondFailed
	}
	if err := insertEntries(ctx, tx.StmtContext(ctx, st.insertEntry), p.Entries); err != nil {
		return err
	}
	for _, h := range p.Rejected {
		if _, err := tx.StmtContext(ctx, st.insertRejection).ExecContext(ctx, a.World, a.Epoch, h); err != nil {
			return fmt.Errorf("recording rejection: %w", err)
		}
	}
	return nil
}

const insertEntrySQL = `INSERT INTO journal_entries
	(world, position, epoch, kind, holder, key, payload, store_time, prev_hash, hash, signature)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// insertEntries inserts entries with stmt (insertEntrySQL bound to the
// transaction).
func insertEntries(ctx context.Context, stmt *sql.Stmt, entries []journal.Entry) error {
	for i := range entries {
		e := &entries[i]
		if _, err := stmt.ExecContext(ctx, e.World, e.Position, e.Epoch, string(e.Kind), e.Holder, e.Key,
			nonNil(e.Payload), e.StoreTime.UnixMicro(), nonNil(e.PrevHash), nonNil(e.Hash), nonNil(e.Signature)); err != nil {
			if isUniqueViolation(err) {
				return fmt.Errorf("entry %d exists: %w", e.Position, driver.ErrConflict)
			}
			return fmt.Errorf("inserting entry %d: %w", e.Position, err)
		}
	}
	return nil
}

func expiresArg(s journal.State) any {
	if !s.Held() {
		return nil
	}
	return s.ExpiresAt.UnixMicro()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nonNil stores empty byte strings as empty BLOBs, not NULL (the columns are
// NOT NULL and an empty prev_hash is meaningful: position 1).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
