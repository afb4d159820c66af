package sqlite

import (
	"context"
	"embed"

	"github.com/leasehold/leasehold/driver"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migrate implements driver.Driver with the one runner of package driver.
// All pending migrations run in one BEGIN IMMEDIATE transaction (SQLite DDL
// is transactional), so two processes migrating at once serialize on the
// writer lock and the second finds nothing to do.
func (d *store) Migrate(ctx context.Context) (driver.MigrateResult, error) {
	return driver.RunMigrations(ctx, d.migrationDialect())
}

// SchemaCheck implements driver.Driver: it reads the version table under
// the same writer lock Migrate takes, and writes nothing.
func (d *store) SchemaCheck(ctx context.Context) error {
	return driver.CheckMigrations(ctx, d.migrationDialect())
}

func (d *store) migrationDialect() driver.MigrationDialect {
	return driver.MigrationDialect{
		Name:  "sqlite",
		Files: migrationFS,
		Begin: func(ctx context.Context) (driver.MigrationTx, error) {
			tx, err := d.w.BeginTx(ctx, nil) // _txlock=immediate: takes the writer lock
			if err != nil {
				return nil, err
			}
			if d.eng.OneStatementPerExec {
				return splitTx{driver.SQLMigrationTx(tx)}, nil
			}
			return driver.SQLMigrationTx(tx), nil
		},
		CreateVersionTable: `CREATE TABLE IF NOT EXISTS leasehold_migrations (
			version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
		RecordVersion:   `INSERT INTO leasehold_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		HasVersionTable: `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'leasehold_migrations'`,
		AppliedAt:       func() any { return d.clock.Now().UnixMicro() },
	}
}

// splitTx runs each migration script statement by statement, for an
// engine that runs only the first statement of a script (libSQL).
type splitTx struct{ driver.MigrationTx }

func (t splitTx) Exec(ctx context.Context, q string, args ...any) error {
	if len(args) > 0 {
		return t.MigrationTx.Exec(ctx, q, args...)
	}
	for _, s := range SplitStatements(q) {
		if err := t.MigrationTx.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
