package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// planFunc plans a change from the locked head at store time now;
// rejected reports whether an append.rejected for holder is already
// journaled in the head's epoch.
type planFunc func(w *driver.World, now time.Time, rejected func(holder string) bool) (journal.Plan, error)

// changeReq names one change: which world, which pool, and, for appends,
// the distinct holders whose rejection markers the planner may ask about.
type changeReq struct {
	world    string
	op       string // for errors: "append", "sweep", "grant", …
	critical bool   // the reserved pool (SyncCritical) or the general one
	holders  []string
	// epochs: the change may start an epoch (a lease change), so round
	// trip 1 also reads the timeline's epoch floor (fencefloor.go) into
	// the head the planner gets. On the same connection, in the same
	// transaction as the write: one server, out of recovery, whose
	// timeline no longer changes.
	epochs bool
}

// Round trip 1: lock the head row, then read the epoch floor (lease
// changes), the store clock and the rejection markers of the locked epoch.
// The statements run in this order within one pipeline, so the clock is
// read after the lock is granted and the markers under it.
const (
	lockHead = `SELECT ` + worldColumns + ` FROM worlds WHERE id = $1 FOR UPDATE`

	readClock = `SELECT clock_timestamp()`

	readRejections = `SELECT holder FROM journal_rejections
WHERE world = $1 AND epoch = (SELECT epoch FROM worlds WHERE id = $1) AND holder = ANY($2::text[])`
)

// writePlan is round trip 2's one statement: the conditional head UPDATE
// whose WHERE is journal.Cond (the position compare-and-swap, the fence —
// epoch and holder —, the expiry on the store clock and the seen position),
// and the entry and rejection-marker INSERTs, each gated on the UPDATE
// having matched. If it matches no row the statement writes nothing at all
// and returns 0. All three parts run on one snapshot as one statement, so
// there is no window between the check and the writes.
const writePlan = `
WITH upd AS (
    UPDATE worlds SET
        position = $1, last_hash = $2, last_time = $3, epoch = $4, holder = $5,
        term_us = $6, expires_at = $7, granted_position = $8, holder_key = $28
    WHERE id = $9
      AND position = $10
      AND epoch = $11
      AND ($12::boolean = false OR holder = $13::text)
      AND ($14::integer = 0
           OR ($14::integer = 1 AND expires_at > $15::timestamptz)
           OR ($14::integer = 2 AND expires_at <= $15::timestamptz))
      AND granted_position <= $16
    RETURNING 1
), ins AS (
    INSERT INTO journal_entries
        (world, position, epoch, kind, holder, key, payload, store_time, prev_hash, hash, signature)
    SELECT $9, e.* FROM unnest($17::bigint[], $18::bigint[], $19::text[], $20::text[], $21::text[],
        $22::bytea[], $23::timestamptz[], $24::bytea[], $25::bytea[], $26::bytea[]) AS e
    WHERE EXISTS (SELECT 1 FROM upd)
), rej AS (
    INSERT INTO journal_rejections (world, epoch, holder)
    SELECT $9, $4, h FROM unnest($27::text[]) AS h
    WHERE EXISTS (SELECT 1 FROM upd)
)
SELECT count(*) FROM upd`

// errCondFailed means the conditional write matched no row although the
// planner, holding the lock, found its preconditions true: the Go rule and
// the SQL rule disagree. It is reported as a fenced write, never applied.
var errCondFailed = fmt.Errorf("conditional head write matched no row: %w", driver.ErrFenced)

// change is the one path by which an existing world's journal and head
// change (LeaseChange — the expiry sweep's too — and JournalAppend). It costs two
// round trips, each one pipelined pgx.Batch:
//
//  1. BEGIN; SELECT head FOR UPDATE; SELECT clock_timestamp();
//     SELECT the batch's holders' rejection markers;
//  2. the conditional write (writePlan); COMMIT.
//
// Between them the pure planner runs in Go against the locked head. An
// empty plan, a planner refusal or a missing world ends with ROLLBACK
// instead of round trip 2. No Go lock is held at any point.
func (d *store) change(ctx context.Context, r changeReq, plan planFunc) (*driver.World, error) {
	fail := func(what string, err error) error {
		return fmt.Errorf("postgres: %s %s: %s: %w", r.op, r.world, what, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, r.critical)
	if err != nil {
		return nil, fail("acquire", err)
	}
	defer conn.Release()
	// Whatever happens below, never hand a connection back inside a
	// transaction: roll it back (pgxpool would otherwise discard it).
	defer d.endTx(ctx, conn)

	w, now, rejected, found, err := d.lockHead(ctx, conn, r)
	if err != nil {
		return nil, fail("locking the head", err)
	}
	if !found {
		return nil, fmt.Errorf("world %q: %w", r.world, driver.ErrNotFound)
	}
	p, err := plan(w, now, func(holder string) bool { return rejected[holder] })
	w.EpochFloor = 0 // the planner's input, not the head's
	if err != nil {
		return nil, err
	}
	if p.Empty() {
		return w, nil
	}
	// A grant or handoff carries the grantee's registered key, read in the
	// transaction (a round trip only for those).
	if err := journal.BindKeys(&p, func(node string) ([]byte, error) { return nodeKey(ctx, conn, node) }); err != nil {
		return nil, fail("reading the grantee's key", err)
	}
	n, err := d.commitPlan(ctx, conn, &p)
	if err != nil {
		return nil, fail("writing", err)
	}
	if n != 1 {
		return nil, fail("writing", errCondFailed)
	}
	after := *w
	after.State = p.After
	return &after, nil
}

// lockHead is round trip 1. found is false when the world does not exist;
// the transaction is then still open for endTx to roll back.
func (d *store) lockHead(ctx context.Context, conn *pgxpool.Conn, r changeReq) (
	w *driver.World, now time.Time, rejected map[string]bool, found bool, err error) {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(lockHead, r.world)
	if r.epochs {
		b.Queue(plantedFloorBug(readFloor))
	}
	if d.clock == nil {
		b.Queue(readClock)
	}
	if len(r.holders) > 0 {
		b.Queue(readRejections, r.world, r.holders)
	}
	br := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if _, err = br.Exec(); err != nil {
		return
	}
	w, err = scanWorld(br.QueryRow())
	found = err == nil
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil
	}
	if err != nil {
		return
	}
	if r.epochs { // read whether or not the world exists: results come in order
		var floor int64
		if err = br.QueryRow().Scan(&floor); err != nil {
			return
		}
		if found {
			w.EpochFloor = floor
		}
	}
	if d.clock == nil {
		if err = br.QueryRow().Scan(&now); err != nil {
			return
		}
	}
	if len(r.holders) > 0 {
		var rows pgx.Rows
		if rows, err = br.Query(); err != nil {
			return
		}
		for rows.Next() {
			var h string
			if err = rows.Scan(&h); err != nil {
				rows.Close()
				return
			}
			if rejected == nil {
				rejected = map[string]bool{}
			}
			rejected[h] = true
		}
		rows.Close()
		if err = rows.Err(); err != nil {
			return
		}
	}
	if d.clock != nil {
		// Read after the lock was granted, like clock_timestamp() above.
		now = d.clock.Now()
	}
	return w, now, rejected, found, nil
}

// commitPlan is round trip 2: the conditional write and COMMIT, pipelined.
// It returns the number of head rows updated (1, or 0 when the condition
// failed, in which case the COMMIT commits nothing).
func (d *store) commitPlan(ctx context.Context, conn *pgxpool.Conn, p *journal.Plan) (n int64, err error) {
	b := &pgx.Batch{}
	b.Queue(writePlan, planArgs(p)...)
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err = br.QueryRow().Scan(&n); err != nil {
		return 0, mapWriteError(err)
	}
	if _, err = br.Exec(); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return n, nil
}

// withCtx adds the context's error to err when the context has ended, so
// errors.Is(err, context.DeadlineExceeded) holds also when the server
// answered the cancel request with its own error (SQLSTATE 57014).
func withCtx(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%w)", err, cerr)
	}
	return err
}

// endTx rolls back a transaction the change left open (a missing world, a
// planner refusal, an empty plan, a failed statement). It reads the
// connection's transaction status from the last ReadyForQuery, so it costs
// nothing after a COMMIT. If the connection is broken or the rollback fails
// the connection stays in a transaction and pgxpool discards it on Release.
func (d *store) endTx(ctx context.Context, conn *pgxpool.Conn) {
	pc := conn.Conn().PgConn()
	if pc.IsClosed() || pc.TxStatus() == 'I' {
		return
	}
	// The caller's context may be why we are here; a rollback must not
	// inherit its cancellation, only be bounded.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.cfg.StatementTimeout)
	defer cancel()
	if _, err := conn.Exec(rctx, "ROLLBACK"); err != nil {
		d.log.DebugContext(ctx, "postgres: rollback failed; the connection will be discarded", "err", err)
	}
}

// planArgs are writePlan's parameters: the head after the plan ($1–$8),
// the condition ($9–$16), the entries as arrays ($17–$26) and the holders
// whose append.rejected the plan journals ($27), and the key the epoch's
// grant carries ($28).
func planArgs(p *journal.Plan) []any {
	a, c := p.After, p.Cond
	args := make([]any, 0, 28)
	args = append(args,
		a.Position, nonNil(a.LastHash), a.LastTime, a.Epoch, a.Holder,
		int64(a.Term/time.Microsecond), expiresArg(a), a.GrantedAt,
		a.World, c.Position, c.Epoch, c.CheckHolder, c.Holder, int32(c.Expiry), c.Now, c.MaxGrantedAt)
	args = append(args, entryArrays(p.Entries)...)
	rej := p.Rejected
	if rej == nil {
		rej = []string{}
	}
	return append(args, rej, nonNil(a.HolderKey))
}

// entryArrays turns entries into the ten column arrays that writePlan and
// insertEntries unnest: position, epoch, kind, holder, key, payload,
// store_time, prev_hash, hash, signature. Empty byte strings are sent as
// empty bytea rather than NULL (the columns are NOT NULL, and an empty prev_hash is
// meaningful: position 1).
func entryArrays(es []journal.Entry) []any {
	n := len(es)
	pos, epoch := make([]int64, n), make([]int64, n)
	kind, holder, key := make([]string, n), make([]string, n), make([]string, n)
	payload, prev, hash, sig := make([][]byte, n), make([][]byte, n), make([][]byte, n), make([][]byte, n)
	st := make([]time.Time, n)
	for i := range es {
		e := &es[i]
		pos[i], epoch[i] = e.Position, e.Epoch
		kind[i], holder[i], key[i] = string(e.Kind), e.Holder, e.Key
		payload[i], prev[i], hash[i], sig[i] = nonNil(e.Payload), nonNil(e.PrevHash), nonNil(e.Hash), nonNil(e.Signature)
		st[i] = e.StoreTime
	}
	return []any{pos, epoch, kind, holder, key, payload, st, prev, hash, sig}
}

// expiresArg is the expires_at column of a head: NULL while nobody holds
// the lease.
func expiresArg(s journal.State) *time.Time {
	if !s.Held() {
		return nil
	}
	t := s.ExpiresAt
	return &t
}

// nonNil stores empty byte strings as empty bytea, not NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// fakeNow is the injected store time for SQL of the form
// coalesce($n, clock_timestamp()): nil (SQL NULL) unless a StoreClock is set.
// It is truncated to microseconds as journal.NormalizeTime does, because
// timestamptz would otherwise round it, and a time the store rounded up
// would disagree with the same instant compared in Go.
func (d *store) fakeNow() *time.Time {
	if d.clock == nil {
		return nil
	}
	t := journal.NormalizeTime(d.clock.Now())
	return &t
}
