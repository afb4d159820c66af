package sqlite

import (
	"bytes"
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
	// prefetch looks up keys in chunks (selectKeys) before the planner
	// asks for them one by one: appended then answers from memory.
	prefetch func(keys []string)
}

// change is the one path by which a world's journal and head change:
// BEGIN IMMEDIATE (the single writer), read the head, plan, one conditional
// head UPDATE that re-asserts the plan's Cond, insert the entries, commit.
// A plan that leaves the lease as it was (every append) writes no head row:
// its first entry INSERT re-asserts the Cond instead (tail.go).
//
// When this store remembers the world's head from its own last commit
// (d.heads) it plans from that row first and skips the read: a plan that
// writes only the tail (every append) goes down with tailGuard's known
// form, whose WHERE also asserts that the stored head is the remembered one. If it is
// not (or the plan is another kind), the head is read and the change
// planned again, all under the same write lock, as without the cache.
//
// direct says the plan makes no read of its own (a keyless append): with a
// remembered head it then runs on the writer's driver connection, under
// database/sql (changeDirect, direct.go), and comes here only if that wrote
// nothing.
func (d *store) change(ctx context.Context, worldID, op string, direct bool, plan planFunc) (*driver.World, error) {
	useHead := true
	if direct && d.eng.direct {
		if h, ok := d.heads.get(worldID); ok {
			w, done, stale, err := d.changeDirect(ctx, worldID, op, h, plan)
			if done {
				return w, err
			}
			useHead = !stale // the remembered head was tried: read it
		}
	}
	st, err := d.prepared(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: begin: %w", op, worldID, err)
	}
	defer tx.Rollback()
	// BEGIN IMMEDIATE waited for the write lock under ctx (another
	// process's write, an outage, ends at the caller's deadline), and
	// Commit watches ctx too. The statements between them are short and in
	// process, and modernc.org/sqlite starts a goroutine per statement run
	// under a cancellable context, to interrupt it: they run without. A ctx
	// that ends meanwhile still ends the change with nothing written:
	// database/sql rolls the transaction back, and the next statement or
	// Commit fails.
	ctx = context.WithoutCancel(ctx)
	now := d.clock.Now()
	if h, ok := d.heads.get(worldID); ok && useHead {
		// A plan refused or failed here may be the remembered head's
		// fault: only a write that matches the stored row stands.
		w := h.world()
		p, err := d.planIn(ctx, tx, st, w, now, op, plan)
		if errors.Is(err, errReadingHead) {
			// Not the plan's refusal: a read failed, and SQLite may have
			// rolled the whole transaction back (IOERR, NOMEM, FULL on a
			// read-only statement end it), after which the statements
			// below would each commit on their own. Nothing is written.
			return nil, err
		}
		if err == nil && !p.Empty() && sameLease(&w.State, &p.After) {
			if err := bindKeys(ctx, tx, &p); err != nil {
				return nil, fmt.Errorf("sqlite: %s %s: %w", op, worldID, err)
			}
			written, err := d.writeKnown(ctx, tx, st, &h, &p)
			if err != nil {
				return nil, fmt.Errorf("sqlite: %s %s: %w", op, worldID, err)
			}
			if written {
				return d.commitChange(tx, op, w, h, &p)
			}
		}
	}
	h, err := scanHead(tx.StmtContext(ctx, st.selectWorld).QueryRowContext(ctx, worldID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("world %q: %w", worldID, driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: reading head: %w", op, worldID, err)
	}
	w := h.world()
	p, err := d.planIn(ctx, tx, st, w, now, op, plan)
	if err != nil {
		return nil, err
	}
	if p.Empty() {
		return w, nil
	}
	if err := bindKeys(ctx, tx, &p); err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: %w", op, worldID, err)
	}
	if err := d.writePlan(ctx, tx, st, &w.State, &p); err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: %w", op, worldID, err)
	}
	return d.commitChange(tx, op, w, h, &p)
}

// commitChange commits the change planned from w (stored as h) and
// remembers the head it leaves.
func (d *store) commitChange(tx *sql.Tx, op string, w *driver.World, h headRow, p *journal.Plan) (*driver.World, error) {
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: %s %s: commit: %w", op, w.World, err)
	}
	d.heads.put(h.after(&p.After))
	after := *w
	after.State = p.After
	return &after, nil
}

// bindKeys gives a grant or handoff the grantee's registered key, read
// under the write lock (no lookup for anything else).
func bindKeys(ctx context.Context, tx *sql.Tx, p *journal.Plan) error {
	return journal.BindKeys(p, func(node string) ([]byte, error) { return nodeKey(ctx, tx, node) })
}

// planIn runs plan on the head w inside tx, with the reads it may make.
func (d *store) planIn(ctx context.Context, tx *sql.Tx, st *stmts, w *driver.World, now time.Time, op string, plan planFunc) (journal.Plan, error) {
	worldID := w.World
	var qerr error
	rejected := func(holder string) bool {
		var one int
		err := tx.StmtContext(ctx, st.selectRejection).QueryRowContext(ctx, worldID, w.Epoch, holder).Scan(&one)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			qerr = err
		}
		return err == nil
	}
	var known map[string]int64 // prefetched keys: position, or 0 when absent
	appended := func(key string) (int64, bool) {
		if pos, ok := known[key]; ok {
			return pos, pos > 0
		}
		var pos int64
		err := tx.StmtContext(ctx, st.selectKey).QueryRowContext(ctx, worldID, key).Scan(&pos)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			qerr = err
		}
		return pos, err == nil
	}
	prefetch := func(keys []string) {
		known = make(map[string]int64, len(keys))
		stmt := tx.StmtContext(ctx, st.selectKeys)
		args := make([]any, 1+keyChunk)
		args[0] = worldID
		for len(keys) > 0 && qerr == nil {
			n := min(len(keys), keyChunk)
			for i := range keyChunk {
				args[1+i] = keys[min(i, n-1)] // a short chunk repeats its last key
			}
			for _, k := range keys[:n] {
				known[k] = 0
			}
			qerr = func() error {
				rows, err := stmt.QueryContext(ctx, args...)
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					var k string
					var pos int64
					if err := rows.Scan(&k, &pos); err != nil {
						return err
					}
					known[k] = pos
				}
				return rows.Err()
			}()
			keys = keys[n:]
		}
	}
	p, err := plan(w, now, &headQueries{rejected: rejected, appended: appended, prefetch: prefetch})
	if qerr != nil {
		return journal.Plan{}, fmt.Errorf("sqlite: %s %s: %w: %w", op, worldID, errReadingHead, qerr)
	}
	return p, err
}

// errReadingHead marks a plan that failed on a read of its own (the
// rejections or keys), not on the plan's rule: change must not go on in
// the transaction then.
var errReadingHead = errors.New("reading rejections or keys")

// writeKnown writes p, planned from the remembered head h and leaving its
// lease as it was, with the known guard (tailGuard); false (and nothing
// written) when the head is not h or the Cond does not hold.
func (d *store) writeKnown(ctx context.Context, tx *sql.Tx, st *stmts, h *headRow, p *journal.Plan) (bool, error) {
	err := d.insertTail(ctx, tx, st, true, knownGuardArgs(h, p), p.Entries)
	if errors.Is(err, errGuard) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, d.writeRejections(ctx, tx, st, p)
}

// condUpdate is the conditional write of a plan that changes the lease.
// Its WHERE is journal.Cond: the position compare-and-swap (against the
// world's last entry, the journal's tail: world_heads), the fence (epoch
// and holder), the expiry on the store clock and the seen position. If it
// matches no row, nothing of the plan is written. It sets the row's tail
// columns too, which nothing reads (migration 0016). A plan that leaves
// the lease as it was writes no head row: its first entry INSERT is
// guarded instead (tail.go).
const condUpdate = `
UPDATE worlds SET
    position = ?1, last_hash = ?2, last_time = ?3, epoch = ?4, holder = ?5,
    term_us = ?6, expires_at = ?7, granted_position = ?8, holder_key = ?17
WHERE id = ?9
  AND (SELECT position FROM journal_entries WHERE world = ?9 ORDER BY position DESC LIMIT 1) = ?10
  AND epoch = ?11
  AND (?12 = 0 OR holder = ?13)
  AND (?14 = 0 OR (?14 = 1 AND expires_at > ?15) OR (?14 = 2 AND expires_at <= ?15))
  AND granted_position <= ?16`

// sameLease reports whether after leaves every lease column of the worlds
// row as before has it (the plan then writes no head row: tail.go).
func sameLease(before, after *journal.State) bool {
	if before == nil {
		return false
	}
	be, ae := expiresArg(*before), expiresArg(*after)
	return before.Epoch == after.Epoch && before.Holder == after.Holder && before.Term == after.Term &&
		be == ae && before.GrantedAt == after.GrantedAt && bytes.Equal(before.HolderKey, after.HolderKey) &&
		(before.HolderKey == nil) == (after.HolderKey == nil)
}

// errCondFailed means the conditional write matched no row although the
// planner, holding the lock, found its preconditions true: the Go rule and
// the SQL rule disagree. It is reported as a fenced write, never applied.
var errCondFailed = fmt.Errorf("conditional head write matched no row: %w", driver.ErrFenced)

// writePlan writes p in tx. before is the head the plan was made from,
// read in tx (nil when the caller has none): a plan that leaves its lease
// as it was writes only its entries, the first INSERT guarded (tail.go).
func (d *store) writePlan(ctx context.Context, tx *sql.Tx, st *stmts, before *journal.State, p *journal.Plan) error {
	a, c := p.After, p.Cond
	if sameLease(before, &a) && len(p.Entries) > 0 {
		err := d.insertTail(ctx, tx, st, false, tailGuardArgs(p), p.Entries)
		if errors.Is(err, errGuard) {
			return errCondFailed
		}
		if err != nil {
			return err
		}
		return d.writeRejections(ctx, tx, st, p)
	}
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
	if err := d.insertEntries(ctx, tx, st, p.Entries); err != nil {
		return err
	}
	return d.writeRejections(ctx, tx, st, p)
}

// writeRejections records a plan's rejections.
func (d *store) writeRejections(ctx context.Context, tx *sql.Tx, st *stmts, p *journal.Plan) error {
	for _, h := range p.Rejected {
		if _, err := tx.StmtContext(ctx, st.insertRejection).ExecContext(ctx, p.After.World, p.After.Epoch, h); err != nil {
			return fmt.Errorf("recording rejection: %w", err)
		}
	}
	return nil
}

// insertTail inserts entries in tx, the first statement guarded by
// tailGuard (known or not) with the arguments guard: errGuard, nothing
// inserted, if the guard does not hold.
func (d *store) insertTail(ctx context.Context, tx *sql.Tx, st *stmts, known bool, guard []any, entries []journal.Entry) error {
	plain := plainInserts(ctx, tx, st)
	return d.insertEntriesWith(entries, func(chunk, first bool, args []any) error {
		if first {
			g := st.guardTail
			switch {
			case known && chunk:
				g = st.guardKnownMany
			case known:
				g = st.guardKnown
			case chunk:
				g = st.guardTailMany
			}
			return guarded(tx.StmtContext(ctx, g).ExecContext(ctx, append(args, guard...)...))(len(args) / 11)
		}
		return plain(chunk, args)
	})
}

// plainInserts returns the unguarded entry insert of tx: the multi-row
// statement for a chunk, the one-row statement otherwise, each bound to tx
// once, on its first use.
func plainInserts(ctx context.Context, tx *sql.Tx, st *stmts) func(chunk bool, args []any) error {
	var many, one *sql.Stmt
	return func(chunk bool, args []any) error {
		if chunk {
			if many == nil {
				many = tx.StmtContext(ctx, st.insertEntries)
			}
			_, err := many.ExecContext(ctx, args...)
			return err
		}
		if one == nil {
			one = tx.StmtContext(ctx, st.insertEntry)
		}
		_, err := one.ExecContext(ctx, args...)
		return err
	}
}

// guarded checks a guarded INSERT's result: errGuard unless it inserted
// its rows.
func guarded(res sql.Result, err error) func(rows int) error {
	return func(rows int) error {
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n != int64(rows) {
			return errGuard
		}
		return nil
	}
}

const (
	insertEntryHead = `INSERT INTO journal_entries
	(world, position, epoch, kind, holder, key, payload, store_time, prev_hash, hash, signature)`
	insertEntrySQL = insertEntryHead + `
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// insertEntries inserts entries in the transaction: entryChunk at a time
// with the multi-row statement, the rest one by one.
func (d *store) insertEntries(ctx context.Context, tx *sql.Tx, st *stmts, entries []journal.Entry) error {
	plain := plainInserts(ctx, tx, st)
	return d.insertEntriesWith(entries, func(chunk, _ bool, args []any) error { return plain(chunk, args) })
}

// insertEntriesWith inserts entries with exec: entryChunk at a time with
// the multi-row statement (chunk true), the rest one by one; first is true
// for the first statement only.
func (d *store) insertEntriesWith(entries []journal.Entry, exec func(chunk, first bool, args []any) error) error {
	first := true
	var args []any
	add := func(e *journal.Entry) {
		args = append(args, e.World, e.Position, e.Epoch, string(e.Kind), e.Holder, e.Key,
			nonNil(e.Payload), e.StoreTime.UnixMicro(), nonNil(e.PrevHash), nonNil(e.Hash), nonNil(e.Signature))
	}
	fail := func(from, to int64, err error) error {
		if errors.Is(err, errGuard) {
			return err
		}
		if d.eng.IsUnique(err) {
			return fmt.Errorf("an entry of %d..%d exists: %w", from, to, driver.ErrConflict)
		}
		return fmt.Errorf("inserting entries %d..%d: %w", from, to, err)
	}
	if len(entries) >= entryChunk {
		args = make([]any, 0, 11*entryChunk)
		for len(entries) >= entryChunk {
			args = args[:0]
			for i := range entryChunk {
				add(&entries[i])
			}
			err := exec(true, first, args)
			first = false
			if err != nil {
				return fail(entries[0].Position, entries[entryChunk-1].Position, err)
			}
			entries = entries[entryChunk:]
		}
	}
	for i := range entries {
		args = args[:0]
		add(&entries[i])
		err := exec(false, first, args)
		first = false
		if err != nil {
			return fail(entries[i].Position, entries[i].Position, err)
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
