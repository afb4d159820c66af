package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrateLock serializes migrators of one schema: a transaction-scoped
// advisory lock keyed by the schema the tables land in, so concurrent
// Migrate calls on one schema run one after the other (the second finds
// nothing to do) while migrations of other schemas do not wait.
const migrateLock = `SELECT pg_advisory_xact_lock(hashtextextended('leasehold.migrate:' || coalesce(current_schema(), ''), 0))`

// Migrate implements driver.Driver. All pending migrations run in one
// transaction (Postgres DDL is transactional) under migrateLock: either all
// of them apply or none does.
func (d *store) Migrate(ctx context.Context) (driver.MigrateResult, error) {
	var res driver.MigrateResult
	ms, err := driver.LoadMigrations(migrationFS, "migrations")
	if err != nil {
		return res, err
	}
	latest := ms[len(ms)-1].Version
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return res, fmt.Errorf("postgres: migrate: %w", err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return res, fmt.Errorf("postgres: migrate: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, migrateLock); err != nil {
		return res, fmt.Errorf("postgres: migrate: taking the migration lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS leasehold_migrations (
		version    integer     PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL)`); err != nil {
		return res, fmt.Errorf("postgres: migrate: %w", err)
	}
	var current int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM leasehold_migrations`).Scan(&current); err != nil {
		return res, fmt.Errorf("postgres: migrate: %w", err)
	}
	if current > latest {
		return res, fmt.Errorf("postgres: schema version %d, this binary knows up to %d: upgrade the binary: %w",
			current, latest, driver.ErrSchemaTooNew)
	}
	for _, m := range ms {
		if m.Version <= current {
			continue
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return res, fmt.Errorf("postgres: migration %s: %w", m.Name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO leasehold_migrations (version, name, applied_at)
			VALUES ($1, $2, coalesce($3::timestamptz, clock_timestamp()))`, m.Version, m.Name, d.fakeNow()); err != nil {
			return res, fmt.Errorf("postgres: migration %s: %w", m.Name, err)
		}
		res.Applied = append(res.Applied, m.Version)
		current = m.Version
	}
	if err := tx.Commit(ctx); err != nil {
		return res, fmt.Errorf("postgres: migrate: commit: %w", err)
	}
	res.Version = current
	return res, nil
}
