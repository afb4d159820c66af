package driver

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
)

// MigrationTx is the one transaction a migration runs in, opened by a
// dialect with its migration lock already taken.
type MigrationTx interface {
	// Exec runs one statement (a migration file may hold several).
	Exec(ctx context.Context, sql string, args ...any) error
	// QueryInt runs a one-row, one-column query.
	QueryInt(ctx context.Context, sql string) (int, error)
	// Commit commits; End releases what Begin took and rolls back if
	// Commit was not reached. End after Commit is a no-op rollback.
	Commit(ctx context.Context) error
	End(ctx context.Context)
}

// MigrationDialect is what a driver supplies to the one migration runner
// (RunMigrations): its embedded files, its transaction and lock, and the SQL
// of its version table.
type MigrationDialect struct {
	// Name prefixes errors: "sqlite", "postgres".
	Name string
	// Files holds migrations/*.sql (see LoadMigrations).
	Files fs.FS
	// Begin opens the transaction every pending migration runs in, holding
	// the lock that serializes migrators of one store (SQLite: BEGIN
	// IMMEDIATE, the single writer; Postgres: a transaction-scoped advisory
	// lock per schema). DDL is transactional on both, so either all pending
	// migrations apply or none does, and a second migrator waiting on the
	// lock then finds nothing to do.
	Begin func(ctx context.Context) (MigrationTx, error)
	// CreateVersionTable creates leasehold_migrations (version, name,
	// applied_at) if it does not exist.
	CreateVersionTable string
	// RecordVersion inserts one row into it; its arguments are the
	// version, the file name and AppliedAt().
	RecordVersion string
	// HasVersionTable is a one-row query answering 1 when
	// leasehold_migrations exists in the store's schema, else 0
	// (SchemaCheck must not create it).
	HasVersionTable string
	// AppliedAt is the last argument of RecordVersion: the store time (or
	// the dialect's placeholder for it).
	AppliedAt func() any
}

// RunMigrations applies the dialect's embedded migrations not yet applied,
// in order, in one transaction. It is idempotent and safe to run from
// several processes at once, and it refuses with ErrSchemaTooNew a schema
// that a newer binary migrated (a version above the highest file).
func RunMigrations(ctx context.Context, d MigrationDialect) (MigrateResult, error) {
	var res MigrateResult
	ms, err := LoadMigrations(d.Files, "migrations")
	if err != nil {
		return res, err
	}
	latest := ms[len(ms)-1].Version
	fail := func(what string, err error) (MigrateResult, error) {
		return MigrateResult{}, fmt.Errorf("%s: %s: %w", d.Name, what, err)
	}
	tx, err := d.Begin(ctx)
	if err != nil {
		return fail("migrate", err)
	}
	defer tx.End(ctx)
	if err := tx.Exec(ctx, d.CreateVersionTable); err != nil {
		return fail("migrate", err)
	}
	current, err := tx.QueryInt(ctx, `SELECT coalesce(max(version), 0) FROM leasehold_migrations`)
	if err != nil {
		return fail("migrate", err)
	}
	if current > latest {
		return res, fmt.Errorf("%s: schema version %d, this binary knows up to %d: upgrade the binary: %w",
			d.Name, current, latest, ErrSchemaTooNew)
	}
	for _, m := range ms {
		if m.Version <= current {
			continue
		}
		if err := tx.Exec(ctx, m.SQL); err != nil {
			return fail("migration "+m.Name, err)
		}
		if err := tx.Exec(ctx, d.RecordVersion, m.Version, m.Name, d.AppliedAt()); err != nil {
			return fail("migration "+m.Name, err)
		}
		res.Applied = append(res.Applied, m.Version)
		current = m.Version
	}
	if err := tx.Commit(ctx); err != nil {
		return fail("migrate: commit", err)
	}
	res.Version = current
	return res, nil
}

// CheckMigrations is SchemaCheck for a dialect: it reads the version
// table, under the migration lock so a migrator running now is waited
// for, and writes nothing. ErrNotMigrated when the table is missing or
// behind the highest embedded migration, ErrSchemaTooNew when past it.
func CheckMigrations(ctx context.Context, d MigrationDialect) error {
	ms, err := LoadMigrations(d.Files, "migrations")
	if err != nil {
		return err
	}
	latest := ms[len(ms)-1].Version
	tx, err := d.Begin(ctx)
	if err != nil {
		return fmt.Errorf("%s: schema check: %w", d.Name, err)
	}
	defer tx.End(ctx)
	has, err := tx.QueryInt(ctx, d.HasVersionTable)
	if err != nil {
		return fmt.Errorf("%s: schema check: %w", d.Name, err)
	}
	if has == 0 {
		return fmt.Errorf("%s: the store has no leasehold schema (never migrated; this binary knows version %d): %w", d.Name, latest, ErrNotMigrated)
	}
	current, err := tx.QueryInt(ctx, `SELECT coalesce(max(version), 0) FROM leasehold_migrations`)
	if err != nil {
		return fmt.Errorf("%s: schema check: %w", d.Name, err)
	}
	switch {
	case current > latest:
		return fmt.Errorf("%s: schema version %d, this binary knows up to %d: upgrade the binary: %w", d.Name, current, latest, ErrSchemaTooNew)
	case current < latest:
		return fmt.Errorf("%s: schema version %d, this binary needs %d: %w", d.Name, current, latest, ErrNotMigrated)
	}
	return nil
}

// SQLMigrationTx is a database/sql transaction as a MigrationTx, for
// drivers built on database/sql (SQLite).
func SQLMigrationTx(tx *sql.Tx) MigrationTx { return sqlMigrationTx{tx} }

type sqlMigrationTx struct{ tx *sql.Tx }

func (t sqlMigrationTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, q, args...)
	return err
}

func (t sqlMigrationTx) QueryInt(ctx context.Context, q string) (n int, err error) {
	err = t.tx.QueryRowContext(ctx, q).Scan(&n)
	return n, err
}

func (t sqlMigrationTx) Commit(context.Context) error { return t.tx.Commit() }
func (t sqlMigrationTx) End(context.Context)          { _ = t.tx.Rollback() } // a no-op after Commit
