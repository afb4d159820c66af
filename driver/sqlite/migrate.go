package sqlite

import (
	"context"
	"embed"
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrate implements driver.Driver. All pending migrations run in one
// BEGIN IMMEDIATE transaction (SQLite DDL is transactional), so two
// processes migrating at once serialize and the second finds nothing to do.
func (d *store) Migrate(ctx context.Context) (driver.MigrateResult, error) {
	var res driver.MigrateResult
	ms, err := driver.LoadMigrations(migrationFS, "migrations")
	if err != nil {
		return res, err
	}
	latest := ms[len(ms)-1].Version
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("sqlite: migrate: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS leasehold_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		return res, fmt.Errorf("sqlite: migrate: %w", err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM leasehold_migrations`).Scan(&current); err != nil {
		return res, fmt.Errorf("sqlite: migrate: %w", err)
	}
	if current > latest {
		return res, fmt.Errorf("sqlite: schema version %d, this binary knows up to %d: upgrade the binary: %w",
			current, latest, driver.ErrSchemaTooNew)
	}
	for _, m := range ms {
		if m.Version <= current {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return res, fmt.Errorf("sqlite: migration %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO leasehold_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.Version, m.Name, d.clock.Now().UnixMicro()); err != nil {
			return res, fmt.Errorf("sqlite: migration %s: %w", m.Name, err)
		}
		res.Applied = append(res.Applied, m.Version)
		current = m.Version
	}
	if err := tx.Commit(); err != nil {
		return res, fmt.Errorf("sqlite: migrate: %w", err)
	}
	res.Version = current
	return res, nil
}
