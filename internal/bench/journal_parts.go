package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// A journal append is, on both stores, one transaction that locks and
// reads the world's head row, re-asserts the plan's conditions in one
// conditional UPDATE of the head, inserts the entry (and its key into the
// key index) and commits. JournalParts times that transaction built up one
// part at a time beside the store's own one-row commit, so the cost of
// each part is the difference between two adjacent steps (Issue 13's
// Must-show 4 asks which part stands between an append and the floor).
//
// The steps run in turn, a short slice each, round after round, so that
// the load of a shared machine falls on all of them alike; the result of
// a step is its mean over every round. The part steps write to a world of
// their own ("parts") with the store's real tables, indexes, foreign keys
// and triggers; the driver steps append through driver.JournalAppend to
// another world ("real").

// PartStep is one measured step.
type PartStep struct {
	Name  string
	Total time.Duration
	N     int
	// WALBytes is what the step's transactions wrote to the WAL, where the
	// store lets it be counted per step (SQLite: the WAL file's growth;
	// 0 on Postgres, whose WAL the other sessions of the server share).
	WALBytes int64
	// StatementWALBytes is, on Postgres, the WAL the step's statements
	// wrote in one transaction as EXPLAIN (ANALYZE, WAL) reports it, the
	// least of five such transactions (the commit record aside; 0 where
	// not measured).
	StatementWALBytes int64
}

// WALPages is the step's WAL per transaction in SQLite frames (a 24-byte
// header and a 4 KiB page).
func (s PartStep) WALPages() float64 { return float64(s.WALBytes) / (24 + 4096) / float64(max(s.N, 1)) }

// Mean is the step's mean latency.
func (s PartStep) Mean() time.Duration { return s.Total / time.Duration(max(s.N, 1)) }

// PartsConfig shapes JournalParts.
type PartsConfig struct {
	Rounds int           // rounds over every step; defaults to 5
	Slice  time.Duration // time per step per round; defaults to 200ms
}

func (c PartsConfig) withDefaults() PartsConfig {
	if c.Rounds <= 0 {
		c.Rounds = 5
	}
	if c.Slice <= 0 {
		c.Slice = 200 * time.Millisecond
	}
	return c
}

type partFn func(ctx context.Context) error

// walMeter measures a slice's WAL: reset before it, read after it (nil
// where the store cannot tell one session's WAL from another's).
type walMeter struct {
	reset func(ctx context.Context) error
	size  func() (int64, error)
}

// runParts runs fns in turn, cfg.Slice each, cfg.Rounds times.
func runParts(ctx context.Context, cfg PartsConfig, names []string, fns []partFn, wal *walMeter) ([]PartStep, error) {
	out := make([]PartStep, len(fns))
	for i := range out {
		out[i].Name = names[i]
	}
	for range cfg.Rounds {
		for i, fn := range fns {
			var w0 int64
			if wal != nil {
				if err := wal.reset(ctx); err != nil {
					return nil, fmt.Errorf("%s: resetting the WAL: %w", names[i], err)
				}
				var err error
				if w0, err = wal.size(); err != nil {
					return nil, err
				}
			}
			start := time.Now()
			for time.Since(start) < cfg.Slice {
				t0 := time.Now()
				if err := fn(ctx); err != nil {
					return nil, fmt.Errorf("%s: %w", names[i], err)
				}
				out[i].Total += time.Since(t0)
				out[i].N++
			}
			if wal != nil {
				w1, err := wal.size()
				if err != nil {
					return nil, err
				}
				out[i].WALBytes += w1 - w0
			}
		}
	}
	return out, nil
}

// partEntry is what the part steps insert: an entry of the size a small
// append writes (32-byte hashes, a short payload).
type partEntry struct {
	pos       int64
	hash      []byte
	prev      []byte
	payload   []byte
	keyPrefix string
}

func newPartEntry() *partEntry {
	h, p := make([]byte, 32), make([]byte, 32)
	rand.Read(h)
	rand.Read(p)
	return &partEntry{pos: 1, hash: h, prev: p, payload: []byte(`{"n":1}`), keyPrefix: fmt.Sprintf("k-%d-", time.Now().UnixNano())}
}

// driverAppend is one single-entry append through the driver to world,
// keyed when keyed is set, as the group committer sends it.
func driverAppend(d driver.Driver, world string, keyed bool) partFn {
	n := 0
	return func(ctx context.Context) error {
		n++
		req := journal.AppendRequest{Holder: "bench", Epoch: 1, SeenPosition: 1, Kind: "bench", Payload: []byte(`{"n":1}`)}
		if keyed {
			req.Key = fmt.Sprintf("real-%d-%d", time.Now().UnixNano(), n)
		}
		out, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: world, Requests: []journal.AppendRequest{req}})
		if err != nil {
			return err
		}
		return out[0].Err
	}
}

// partsWorlds creates the two worlds of JournalParts, held by "bench".
func partsWorlds(ctx context.Context, d driver.Driver) error {
	for _, w := range []string{"parts", "real"} {
		if _, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: w, Home: "bench", Term: 24 * time.Hour}); err != nil {
			return err
		}
	}
	return nil
}

// SQLiteParts measures the parts on the SQLite file at path, which d (the
// driver, migrated) has open: the part steps go through a second
// database/sql handle on the file with the driver's pragmas (SQLite's
// file lock orders it with the driver's writer).
func SQLiteParts(ctx context.Context, d driver.Driver, path string, cfg PartsConfig) ([]PartStep, error) {
	cfg = cfg.withDefaults()
	if err := partsWorlds(ctx, d); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"+
		"&_pragma=synchronous(FULL)&_pragma=foreign_keys(ON)&_pragma=temp_store(MEMORY)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE TABLE bench_floor (a INTEGER PRIMARY KEY, b BLOB)"); err != nil {
		return nil, err
	}
	// The WAL is counted per step: no automatic checkpoint on either
	// writer connection (it would restart the WAL mid-slice); each slice
	// starts on an empty WAL (a TRUNCATE checkpoint between slices).
	if _, err := db.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		return nil, err
	}
	if b, ok := d.(interface {
		BeginTx(context.Context) (*sql.Tx, error)
	}); ok {
		tx, err := b.BeginTx(ctx)
		if err != nil {
			return nil, err
		}
		_, err = tx.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0")
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	wal := &walMeter{
		reset: func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
			return err
		},
		size: func() (int64, error) {
			fi, err := os.Stat(path + "-wal")
			if err != nil {
				return 0, err
			}
			return fi.Size(), nil
		},
	}
	prep := func(q string) (*sql.Stmt, error) { return db.PrepareContext(ctx, q) }
	floor, err := prep(`INSERT INTO bench_floor (b) VALUES (?)`)
	if err != nil {
		return nil, err
	}
	head, err := prep(`SELECT position, last_hash, epoch, holder, expires_at FROM worlds WHERE id = ?`)
	if err != nil {
		return nil, err
	}
	// The driver's head UPDATE before SQLite migration 0016 (an append now
	// writes no head row: driver/sqlite/tail.go), its WHERE reduced to the
	// position compare-and-swap and the fence (the other terms are
	// constants here).
	upd, err := prep(`UPDATE worlds SET position = ?, last_hash = ?, last_time = ? WHERE id = ? AND position = ? AND epoch = ? AND holder = ?`)
	if err != nil {
		return nil, err
	}
	ins, err := prep(`INSERT INTO journal_entries (world, position, epoch, kind, holder, key, payload, store_time, prev_hash, hash, signature)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	var pos int64
	if err := db.QueryRowContext(ctx, `SELECT position FROM worlds WHERE id = 'parts'`).Scan(&pos); err != nil {
		return nil, err
	}
	e := newPartEntry()
	e.pos = pos
	// step builds one part transaction: the head read, then, by depth, the
	// conditional update, the entry, the entry's key.
	step := func(depth int) partFn {
		return func(ctx context.Context) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			var p, epoch int64
			var last []byte
			var holder string
			var exp sql.NullInt64
			if err := tx.StmtContext(ctx, head).QueryRowContext(ctx, "parts").Scan(&p, &last, &epoch, &holder, &exp); err != nil {
				return err
			}
			now := time.Now().UnixMicro()
			if depth >= 1 {
				r, err := tx.StmtContext(ctx, upd).ExecContext(ctx, p+1, e.hash, now, "parts", p, epoch, holder)
				if err != nil {
					return err
				}
				if n, _ := r.RowsAffected(); n != 1 {
					return fmt.Errorf("head moved under the lock")
				}
			}
			if depth >= 2 {
				key := ""
				if depth >= 3 {
					key = fmt.Sprintf("%s%d", e.keyPrefix, p+1)
				}
				if _, err := tx.StmtContext(ctx, ins).ExecContext(ctx, "parts", p+1, epoch, "bench", holder, key, e.payload, now, e.prev, e.hash, []byte{}); err != nil {
					return err
				}
			}
			return tx.Commit()
		}
	}
	names := []string{"floor: one-row INSERT commit", "lock: BEGIN IMMEDIATE + head read + COMMIT",
		"+ conditional head UPDATE", "+ entry INSERT (keyless)", "+ entry key (unique index)",
		"driver JournalAppend, keyless", "driver JournalAppend, keyed"}
	fns := []partFn{
		func(ctx context.Context) error { _, err := floor.ExecContext(ctx, e.payload); return err },
		step(0), step(1), step(2), step(3),
		driverAppend(d, "real", false), driverAppend(d, "real", true),
	}
	return runParts(ctx, cfg, names, fns, wal)
}

// PostgresParts measures the parts in schema, which d (the driver,
// migrated there) uses, through a connection of its own at url. Each part
// transaction is one round trip (a pipelined batch, as the driver's
// append is), so the steps differ by server work only. Two more steps
// isolate what the journal table adds to a plain insert: the same entry
// into a copy of the table without its foreign key and its notify
// trigger.
func PostgresParts(ctx context.Context, d driver.Driver, url, schema string, cfg PartsConfig) ([]PartStep, error) {
	cfg = cfg.withDefaults()
	if err := partsWorlds(ctx, d); err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	s := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		"SET synchronous_commit = on",
		"SET search_path = " + s,
		"CREATE TABLE bench_floor (a bigserial PRIMARY KEY, b bytea)",
		// LIKE copies columns, the primary key and the key index
		// (INCLUDING INDEXES), not the foreign key nor the trigger.
		"CREATE TABLE bench_entries (LIKE journal_entries INCLUDING INDEXES)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	var pos int64
	if err := conn.QueryRow(ctx, `SELECT position FROM worlds WHERE id = 'parts'`).Scan(&pos); err != nil {
		return nil, err
	}
	e := newPartEntry()
	e.pos = pos
	copyPos := int64(0)
	const (
		headSQL = `SELECT position, epoch, holder FROM worlds WHERE id = 'parts' FOR UPDATE`
		updSQL  = `UPDATE worlds SET position = position + 1, last_hash = $1, last_time = now() WHERE id = 'parts' AND epoch = 1 AND holder = 'bench'`
		insSQL  = `INSERT INTO %s (world, position, epoch, kind, holder, key, payload, store_time, prev_hash, hash, signature)
	VALUES ($1, $2, 1, 'bench', 'bench', $3, $4, now(), $5, $6, '')`
	)
	// step builds one part transaction as one pipelined batch: BEGIN, the
	// head lock, then by depth the update, the entry (into table), its
	// key; COMMIT.
	// build queues one part transaction: BEGIN, the head lock, then by
	// depth the update, the entry (into table), its key; COMMIT. With
	// explain set, each statement runs under EXPLAIN (ANALYZE, WAL) so its
	// WAL can be read back (walOf).
	build := func(depth int, table string, explain bool) *pgx.Batch {
		x := ""
		if explain {
			x = "EXPLAIN (ANALYZE, WAL, FORMAT JSON) "
		}
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		b.Queue(x + headSQL)
		if depth >= 1 {
			b.Queue(x+updSQL, e.hash)
		}
		if depth >= 2 {
			next := &e.pos // a fresh position in the table written
			if table != "journal_entries" {
				next = &copyPos
			}
			*next++
			key := ""
			if depth >= 3 {
				key = fmt.Sprintf("%s%s-%d", e.keyPrefix, table, *next)
			}
			b.Queue(x+fmt.Sprintf(insSQL, table), "parts", *next, key, e.payload, e.prev, e.hash)
		}
		b.Queue("COMMIT")
		return b
	}
	step := func(depth int, table string) partFn {
		return func(ctx context.Context) error { return conn.SendBatch(ctx, build(depth, table, false)).Close() }
	}
	// walOf runs a part transaction once under EXPLAIN and sums the WAL
	// its statements wrote (the commit record aside): per statement, so
	// the other sessions of the server do not count.
	walOf := func(ctx context.Context, depth int, table string) (int64, error) {
		b := build(depth, table, true)
		br := conn.SendBatch(ctx, b)
		defer br.Close()
		var total int64
		for i := range b.Len() {
			if i == 0 || i == b.Len()-1 { // BEGIN, COMMIT
				if _, err := br.Exec(); err != nil {
					return 0, err
				}
				continue
			}
			var raw []byte
			if err := br.QueryRow().Scan(&raw); err != nil {
				return 0, err
			}
			var doc []struct {
				Plan struct {
					WALBytes int64 `json:"WAL Bytes"`
				} `json:"Plan"`
			}
			if err := json.Unmarshal(raw, &doc); err != nil {
				return 0, err
			}
			total += doc[0].Plan.WALBytes
		}
		return total, nil
	}
	names := []string{"floor: one-row autocommit INSERT", "lock: BEGIN + head SELECT FOR UPDATE + COMMIT",
		"+ conditional head UPDATE", "+ entry INSERT, journal_entries (notify trigger)",
		"  the same into a copy without the trigger", "+ entry key (unique index)",
		"  the same into the copy", "driver JournalAppend, keyless", "driver JournalAppend, keyed"}
	fns := []partFn{
		func(ctx context.Context) error {
			_, err := conn.Exec(ctx, "INSERT INTO bench_floor (b) VALUES ($1)", e.payload)
			return err
		},
		step(0, "journal_entries"), step(1, "journal_entries"), step(2, "journal_entries"), step(2, "bench_entries"),
		step(3, "journal_entries"), step(3, "bench_entries"),
		driverAppend(d, "real", false), driverAppend(d, "real", true),
	}
	out, err := runParts(ctx, cfg, names, fns, nil)
	if err != nil {
		return nil, err
	}
	for i, p := range []struct {
		depth int
		table string
	}{{0, "journal_entries"}, {1, "journal_entries"}, {2, "journal_entries"}, {2, "bench_entries"}, {3, "journal_entries"}, {3, "bench_entries"}} {
		// The least of five: a statement that splits an index page, starts
		// a heap page or writes a page's first image since a checkpoint
		// writes more than the part itself, and which statement does is
		// the server's timing, not the part's (CI saw a keyed transaction
		// 4 bytes short of a keyless one that had split a page).
		least := int64(-1)
		for range 5 {
			w, err := walOf(ctx, p.depth, p.table)
			if err != nil {
				return nil, fmt.Errorf("%s: explaining: %w", out[i+1].Name, err)
			}
			if least < 0 || w < least {
				least = w
			}
		}
		out[i+1].StatementWALBytes = least
	}
	return out, nil
}
