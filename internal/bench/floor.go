package bench

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Floor is the store's own one-row commit — no Leasehold code — kept open
// so that `bench journal` can measure it in slices between the appends'
// slices, round after round: a loaded machine then bends the floor and the
// append alike, and their ratio is taken from the same minutes.
type Floor struct {
	one   func() error
	close func()
}

// Measure runs one-row commits back to back for d. The result reads like
// an append run by one appender (one commit per "append").
func (f *Floor) Measure(d time.Duration) (AppendResult, error) {
	lats := make([]time.Duration, 0, 4096)
	cpu0 := ProcessCPU()
	start := time.Now()
	for time.Since(start) < d {
		t0 := time.Now()
		if err := f.one(); err != nil {
			return AppendResult{}, err
		}
		lats = append(lats, time.Since(t0))
	}
	elapsed := time.Since(start)
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	n := int64(len(lats))
	return AppendResult{Appenders: 1, Appends: n, Elapsed: elapsed, Batches: n, Latencies: lats, CPU: ProcessCPU() - cpu0}, nil
}

// Close closes the floor's connection.
func (f *Floor) Close() { f.close() }

// OpenSQLiteFloor opens the SQLite floor: a one-row INSERT in its own
// transaction, prepared once, on a separate file in dir opened with the
// driver's durability pragmas (WAL, synchronous=FULL).
func OpenSQLiteFloor(ctx context.Context, dir string) (*Floor, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "floor.db")+
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS t (a INTEGER PRIMARY KEY, b BLOB)"); err != nil {
		db.Close()
		return nil, err
	}
	ins, err := db.PrepareContext(ctx, "INSERT INTO t (b) VALUES (?)")
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Floor{
		one: func() error {
			_, err := ins.ExecContext(ctx, []byte(`{"op":"bench"}`))
			return err
		},
		close: func() { ins.Close(); db.Close() },
	}, nil
}

// OpenPostgresFloor opens the Postgres floor: a one-row autocommit INSERT
// (one statement, one round trip, one WAL flush) into a table of the given
// schema, with synchronous_commit on as the driver's sessions have it.
func OpenPostgresFloor(ctx context.Context, url, schema string) (*Floor, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	table := pgx.Identifier{schema, "floor"}.Sanitize()
	for _, q := range []string{
		fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (a bigserial PRIMARY KEY, b bytea)", table),
		"SET synchronous_commit = on",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			conn.Close(ctx)
			return nil, err
		}
	}
	q := fmt.Sprintf("INSERT INTO %s (b) VALUES ($1)", table)
	return &Floor{
		one: func() error {
			_, err := conn.Exec(ctx, q, []byte(`{"op":"bench"}`))
			return err
		},
		close: func() { conn.Close(context.Background()) },
	}, nil
}
