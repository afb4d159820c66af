package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// defaultPath is the embedded SQLite store when --db and
// $LEASEHOLD_DATABASE_URL are both unset.
const defaultPath = "leasehold.db"

// defaultStore is --db's default: $LEASEHOLD_DATABASE_URL, else
// ./leasehold.db.
func defaultStore() string {
	if v := os.Getenv("LEASEHOLD_DATABASE_URL"); v != "" {
		return v
	}
	return defaultPath
}

// store is what --db names: a Postgres URL or a SQLite file.
type store struct {
	postgresURL string // set for Postgres
	path        string // set for SQLite
}

// storeFor reads --db: a postgres:// or postgresql:// URL selects Postgres
// (the bare scheme too: pgx reads it as the default server); anything
// else is a SQLite file name.
func storeFor(db string) store {
	if isPostgresURL(db) {
		return store{postgresURL: db}
	}
	return store{path: db}
}

func isPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// openDriver opens the store --db names. The CLI links both drivers; a
// program that imports only driver/sqlite links no pgx.
func openDriver(ctx context.Context, db string) (leasehold.Driver, error) {
	s := storeFor(db)
	if s.postgresURL != "" {
		d, err := postgres.Open(ctx, postgres.Config{URL: s.postgresURL})
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", redact(s.postgresURL), err)
		}
		return d, nil
	}
	d, err := sqlite.Open(ctx, sqlite.Config{Path: s.path})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// openClient opens the store --db names and a client over it.
func openClient(ctx context.Context, db string, cfg leasehold.Config) (*leasehold.Client, error) {
	d, err := openDriver(ctx, db)
	if err != nil {
		return nil, err
	}
	return leasehold.NewClient(ctx, d, cfg) // closes d if it fails
}

// redact drops a password from a URL for error messages: the driver's
// rule (postgres.RedactURL), so the CLI and the driver redact alike.
func redact(u string) string { return postgres.RedactURL(u) }
