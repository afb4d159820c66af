package bench

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// SQLiteMinimalCommit measures the store's own floor: a one-row INSERT in
// its own transaction, on a separate file in dir opened with the driver's
// durability pragmas (WAL, synchronous=FULL). No Leasehold code runs.
func SQLiteMinimalCommit(ctx context.Context, dir string, d time.Duration) (time.Duration, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "floor.db")+
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS t (a INTEGER PRIMARY KEY, b BLOB)"); err != nil {
		return 0, err
	}
	ins, err := db.PrepareContext(ctx, "INSERT INTO t (b) VALUES (?)")
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	return timeLoop(d, func() error {
		_, err := ins.ExecContext(ctx, []byte(`{"op":"bench"}`))
		return err
	})
}

// PostgresMinimalCommit measures a one-row autocommit INSERT (one round
// trip, one WAL flush) into a table of the given schema.
func PostgresMinimalCommit(ctx context.Context, url, schema string, d time.Duration) (time.Duration, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	table := pgx.Identifier{schema, "floor"}.Sanitize()
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (a bigserial PRIMARY KEY, b bytea)", table)); err != nil {
		return 0, err
	}
	if _, err := conn.Exec(ctx, "SET synchronous_commit = on"); err != nil {
		return 0, err
	}
	q := fmt.Sprintf("INSERT INTO %s (b) VALUES ($1)", table)
	return timeLoop(d, func() error {
		_, err := conn.Exec(ctx, q, []byte(`{"op":"bench"}`))
		return err
	})
}

func timeLoop(d time.Duration, fn func() error) (time.Duration, error) {
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		if err := fn(); err != nil {
			return 0, err
		}
		n++
	}
	return time.Since(start) / time.Duration(max(n, 1)), nil
}
