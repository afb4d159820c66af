package sqlite

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/leasehold/leasehold/driver"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	files, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, f := range files {
		base := strings.TrimPrefix(f, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("sqlite: migration %s: name must start with its version: %w", base, err)
		}
		b, err := migrationFS.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

// Migrate implements driver.Driver. All pending migrations run in one
// BEGIN IMMEDIATE transaction (SQLite DDL is transactional), so two
// processes migrating at once serialize and the second finds nothing to do.
func (d *Driver) Migrate(ctx context.Context) (driver.MigrateResult, error) {
	var res driver.MigrateResult
	ms, err := migrations()
	if err != nil {
		return res, err
	}
	latest := ms[len(ms)-1].version
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
		if m.version <= current {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return res, fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO leasehold_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, d.clock.Now().UnixMicro()); err != nil {
			return res, fmt.Errorf("sqlite: migration %s: %w", m.name, err)
		}
		res.Applied = append(res.Applied, m.version)
		current = m.version
	}
	if err := tx.Commit(); err != nil {
		return res, fmt.Errorf("sqlite: migrate: %w", err)
	}
	res.Version = current
	return res, nil
}
