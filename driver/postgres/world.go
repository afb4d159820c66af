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

const worldColumns = `id, home, default_term_us, position, last_hash, last_time, epoch, holder,
	term_us, expires_at, granted_position, created_at, holder_key`

func scanWorld(r pgx.Row) (*driver.World, error) {
	var w driver.World
	var defTerm, term int64
	var expires *time.Time
	if err := r.Scan(&w.World, &w.Home, &defTerm, &w.Position, &w.LastHash, &w.LastTime, &w.Epoch, &w.Holder,
		&term, &expires, &w.GrantedAt, &w.CreatedAt, &w.HolderKey); err != nil {
		return nil, err
	}
	if len(w.LastHash) == 0 {
		w.LastHash = nil
	}
	if len(w.HolderKey) == 0 {
		w.HolderKey = nil
	}
	w.DefaultTerm = time.Duration(defTerm) * time.Microsecond
	w.Term = time.Duration(term) * time.Microsecond
	// pgx returns timestamptz in the local zone; the journal's times are
	// UTC (the instant, and so the hash, is the same either way).
	w.LastTime, w.CreatedAt = w.LastTime.UTC(), w.CreatedAt.UTC()
	if expires != nil {
		w.ExpiresAt = expires.UTC()
	}
	return &w, nil
}

// WorldGet implements driver.Driver.
func (d *store) WorldGet(ctx context.Context, p *driver.WorldGetParams) (*driver.World, error) {
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading world %q: %w", p.World, err)
	}
	defer conn.Release()
	w, err := scanWorld(conn.QueryRow(ctx, `SELECT `+worldColumns+` FROM worlds WHERE id = $1`, p.World))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("world %q: %w", p.World, driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: reading world %q: %w", p.World, err)
	}
	return w, nil
}

// WorldList implements driver.Driver. Ids sort in byte order (the column's
// collation is "C"), as in SQLite.
func (d *store) WorldList(ctx context.Context, p *driver.WorldListParams) ([]*driver.World, error) {
	limit := p.Limit // > 0: defaulted by driver.Validating
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing worlds: %w", err)
	}
	defer conn.Release()
	q, args := `SELECT `+worldColumns+` FROM worlds WHERE id > $1 ORDER BY id LIMIT $2`, []any{p.After, limit}
	if p.Home != "" { // the worlds_home index serves it
		q, args = `SELECT `+worldColumns+` FROM worlds WHERE home = $1 AND id > $2 ORDER BY id LIMIT $3`, []any{p.Home, p.After, limit}
	}
	rows, err := conn.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing worlds: %w", err)
	}
	defer rows.Close()
	out, err := driver.CollectRows(rows, func() (*driver.World, error) { return scanWorld(rows) })
	if err != nil {
		return nil, fmt.Errorf("postgres: listing worlds: %w", err)
	}
	return out, nil
}

// WorldCreate implements driver.Driver: one round trip for the store clock
// and the epoch floor (fencefloor.go: a world created again after a lossy
// failover starts past every epoch the lost one had), then one pipelined
// transaction that inserts the head row and the first grant. Both on one
// connection, so the floor is the inserting server's.
func (d *store) WorldCreate(ctx context.Context, p *driver.WorldCreateParams) (*driver.World, error) {
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fmt.Errorf("postgres: creating world %q: %w", p.World, err)
	}
	defer conn.Release()
	now, floor, err := d.nowAndFloor(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("postgres: creating world %q: %w", p.World, err)
	}
	plan, err := journal.PlanCreateAbove(p.World, p.FirstHolder(), p.Term, now, floor)
	if err != nil {
		return nil, err
	}
	// The key is read before the create's transaction: a key registered
	// in between is carried from the node's next grant on.
	if err := journal.BindKeys(&plan, func(node string) ([]byte, error) { return nodeKey(ctx, conn, node) }); err != nil {
		return nil, fmt.Errorf("postgres: creating world %q: %w", p.World, err)
	}
	return d.insertWorld(ctx, conn, p.Home, p.Term, plan.After, plan.Entries, nil, plan.Cond.Now)
}

// now reads the store clock on conn: clock_timestamp(), or the StoreClock.
func (d *store) now(ctx context.Context, conn *pgxpool.Conn) (time.Time, error) {
	if d.clock != nil {
		return d.clock.Now(), nil
	}
	var now time.Time
	if err := conn.QueryRow(ctx, readClock).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("reading the store clock: %w", err)
	}
	return now, nil
}

// nowAndFloor reads the store clock (or the StoreClock) and the epoch
// floor on conn, in one round trip.
func (d *store) nowAndFloor(ctx context.Context, conn *pgxpool.Conn) (now time.Time, floor int64, err error) {
	if d.clock != nil {
		err = conn.QueryRow(ctx, plantedFloorBug(readFloor)).Scan(&floor)
		now = d.clock.Now()
	} else {
		err = conn.QueryRow(ctx, plantedFloorBug(readClockAndFloor)).Scan(&now, &floor)
	}
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("reading the store clock and the epoch floor: %w", err)
	}
	return now, floor, nil
}

const (
	readClockAndFloor = `SELECT clock_timestamp(), ` + timelineFloorSQL

	insertHead = `INSERT INTO worlds (` + worldColumns + `)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`

	insertEntries = `INSERT INTO journal_entries
    (world, position, epoch, kind, holder, key, payload, store_time, prev_hash, hash, signature)
SELECT $1, e.* FROM unnest($2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[],
    $7::bytea[], $8::timestamptz[], $9::bytea[], $10::bytea[], $11::bytea[]) AS e`

	insertRejections = `INSERT INTO journal_rejections (world, epoch, holder)
SELECT $1, r.epoch, r.holder FROM unnest($2::bigint[], $3::text[]) AS r (epoch, holder)
ON CONFLICT DO NOTHING`
)

// insertWorld writes a new world's head row, its whole journal and its
// rejection markers in one transaction, pipelined in one round trip
// (BEGIN … COMMIT in one batch); the primary key makes a second create an
// ErrConflict.
func (d *store) insertWorld(ctx context.Context, conn *pgxpool.Conn, home string, defTerm time.Duration,
	s journal.State, entries []journal.Entry, rs []driver.Rejection, created time.Time) (*driver.World, error) {
	fail := func(err error) error {
		return fmt.Errorf("postgres: creating world %q: %w", s.World, withCtx(ctx, err))
	}
	defer d.endTx(ctx, conn) // a failed INSERT leaves the transaction open and aborted
	created = journal.NormalizeTime(created)
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(insertHead, s.World, home, int64(defTerm/time.Microsecond), s.Position, nonNil(s.LastHash), s.LastTime,
		s.Epoch, s.Holder, int64(s.Term/time.Microsecond), expiresArg(s), s.GrantedAt, created, nonNil(s.HolderKey))
	b.Queue(insertEntries, append([]any{s.World}, entryArrays(entries)...)...)
	if len(rs) > 0 {
		epochs, holders := make([]int64, len(rs)), make([]string, len(rs))
		for i, r := range rs {
			epochs[i], holders[i] = r.Epoch, r.Holder
		}
		b.Queue(insertRejections, s.World, epochs, holders)
	}
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	for range b.Len() {
		if _, err := br.Exec(); err != nil {
			br.Close()
			if isUniqueViolation(err) {
				return nil, fmt.Errorf("world %q exists: %w", s.World, driver.ErrConflict)
			}
			return nil, fail(err)
		}
	}
	if err := br.Close(); err != nil {
		return nil, fail(err)
	}
	return &driver.World{State: s, Home: home, DefaultTerm: defTerm, CreatedAt: created}, nil
}

// JournalImport implements driver.Driver.
func (d *store) JournalImport(ctx context.Context, p *driver.JournalImportParams) (*driver.World, error) {
	imp, err := driver.PrepareImport(p)
	if err != nil {
		return nil, err
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fmt.Errorf("postgres: importing world %q: %w", imp.Final.World, err)
	}
	defer conn.Release()
	now, err := d.now(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("postgres: importing world %q: %w", imp.Final.World, err)
	}
	if err := imp.CheckTime(now); err != nil {
		return nil, err
	}
	return d.insertWorld(ctx, conn, imp.Home, imp.DefaultTerm, imp.Final, p.Entries, imp.Rejections, now)
}

// LeaseChange implements driver.Driver, through the reserved pool.
func (d *store) LeaseChange(ctx context.Context, p *driver.LeaseChangeParams) (*driver.World, error) {
	return d.change(ctx, changeReq{world: p.World, op: p.Op, critical: critical(p), epochs: true},
		func(w *driver.World, now time.Time, _ func(string) bool) (journal.Plan, error) {
			return p.Plan(w, now)
		})
}
