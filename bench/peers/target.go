package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", shared by both systems
)

const (
	storePostgres = "postgres"
	storeSQLite   = "sqlite"

	shapeDrain = "drain"
	shapeMixed = "mixed"
)

// target is a fresh, empty store for one measurement: a new Postgres schema
// or a new SQLite file. The system under test opens its own connections to
// it and migrates it.
type target struct {
	Store string

	PostgresURL string
	Schema      string    // Postgres: created empty; the system sets it as search_path
	admin       *pgx.Conn // Postgres: the bench's own connection (schema, CPU meter)

	SQLitePath string
}

// newTarget creates the fresh schema or file; cleanup drops it.
func newTarget(ctx context.Context, cfg config, store, system string) (target, func(), error) {
	stamp := time.Now().UnixNano()
	switch store {
	case storePostgres:
		t := target{Store: store, PostgresURL: cfg.PostgresURL, Schema: fmt.Sprintf("peers_%s_%d", system, stamp)}
		admin, err := pgx.Connect(ctx, cfg.PostgresURL)
		if err != nil {
			return t, nil, fmt.Errorf("connecting to postgres: %w", err)
		}
		if _, err := admin.Exec(ctx, "CREATE SCHEMA "+t.Schema); err != nil {
			admin.Close(context.WithoutCancel(ctx))
			return t, nil, fmt.Errorf("creating schema %s: %w", t.Schema, err)
		}
		t.admin = admin
		return t, func() {
			ctx := context.Background()
			_, _ = admin.Exec(ctx, "DROP SCHEMA "+t.Schema+" CASCADE")
			// The dropped schema leaves dead rows in the catalogs; on a server
			// without autovacuum (CI's shared one) they pile up and every
			// later measurement's connections look their tables up through
			// them — Leasehold's twenty tables more than River's few, so the
			// ratio drifted over a session. Clearing them here keeps each
			// measurement on the catalogs the first one saw. A user who may
			// not vacuum the catalogs gets a warning, not an error.
			_, _ = admin.Exec(ctx, vacuumCatalogs)
			_ = admin.Close(ctx)
		}, nil
	case storeSQLite:
		dir, err := os.MkdirTemp(cfg.SQLiteDir, fmt.Sprintf("%s-*", system))
		if err != nil {
			return target{}, nil, err
		}
		t := target{Store: store, SQLitePath: filepath.Join(dir, "bench.db")}
		return t, func() { os.RemoveAll(dir) }, nil
	}
	return target{}, nil, fmt.Errorf("unknown store %q", store)
}

// vacuumCatalogs clears the dead catalog rows a dropped measurement schema
// leaves (see newTarget's cleanup).
const vacuumCatalogs = "VACUUM pg_catalog.pg_class, pg_catalog.pg_attribute, pg_catalog.pg_type, " +
	"pg_catalog.pg_depend, pg_catalog.pg_index, pg_catalog.pg_constraint, pg_catalog.pg_namespace, " +
	"pg_catalog.pg_attrdef, pg_catalog.pg_statistic"

// url is the Postgres URL the system under test connects with: the
// measurement's schema as application_name, so the CPU meter finds its
// backends in pg_stat_activity (cpu.go).
func (t target) url() string {
	u, err := url.Parse(t.PostgresURL)
	if err != nil {
		return t.PostgresURL // pgx reports the bad URL when the system opens it
	}
	q := u.Query()
	q.Set("application_name", t.Schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// countCompleted runs query (a count of completed rows, tables unqualified)
// on its own connection, after the system has stopped and closed: what it
// sees is what was durably committed.
func (t target) countCompleted(ctx context.Context, query string) (int64, error) {
	var n int64
	switch t.Store {
	case storePostgres:
		conn, err := pgx.Connect(ctx, t.PostgresURL)
		if err != nil {
			return 0, err
		}
		defer conn.Close(context.WithoutCancel(ctx))
		if _, err := conn.Exec(ctx, "SET search_path TO "+t.Schema); err != nil {
			return 0, err
		}
		err = conn.QueryRow(ctx, query).Scan(&n)
		return n, err
	default:
		db, err := sql.Open("sqlite", "file:"+t.SQLitePath+"?mode=ro")
		if err != nil {
			return 0, err
		}
		defer db.Close()
		err = db.QueryRowContext(ctx, query).Scan(&n)
		return n, err
	}
}
