package postgres

import (
	"context"
	"embed"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/leasehold/driver"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrateLock serializes migrators of one schema: a transaction-scoped
// advisory lock keyed by the schema the tables land in, so concurrent
// Migrate calls on one schema run one after the other (the second finds
// nothing to do) while migrations of other schemas do not wait.
const migrateLock = `SELECT pg_advisory_xact_lock(hashtextextended('leasehold.migrate:' || coalesce(current_schema(), ''), 0))`

// Migrate implements driver.Driver with the one runner of package driver.
// All pending migrations run in one transaction (Postgres DDL is
// transactional) under migrateLock: either all of them apply or none does.
func (d *store) Migrate(ctx context.Context) (driver.MigrateResult, error) {
	return driver.RunMigrations(ctx, d.migrationDialect())
}

// SchemaCheck implements driver.Driver: it reads the version table under
// migrateLock, so a migrator running now is waited for, and writes
// nothing.
func (d *store) SchemaCheck(ctx context.Context) error {
	return driver.CheckMigrations(ctx, d.migrationDialect())
}

func (d *store) migrationDialect() driver.MigrationDialect {
	return driver.MigrationDialect{
		Name:  "postgres",
		Files: migrationFS,
		Begin: func(ctx context.Context) (driver.MigrationTx, error) {
			conn, err := d.acquire(ctx, false)
			if err != nil {
				return nil, err
			}
			tx, err := conn.Begin(ctx)
			if err != nil {
				conn.Release()
				return nil, err
			}
			t := pgMigrationTx{conn: conn, tx: tx}
			if err := t.Exec(ctx, migrateLock); err != nil {
				t.End(ctx)
				return nil, err
			}
			return t, nil
		},
		CreateVersionTable: `CREATE TABLE IF NOT EXISTS leasehold_migrations (
			version    integer     PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL)`,
		RecordVersion: `INSERT INTO leasehold_migrations (version, name, applied_at)
			VALUES ($1, $2, coalesce($3::timestamptz, clock_timestamp()))`,
		// to_regclass resolves the name on the search path: the driver's
		// schema, as every other query does.
		HasVersionTable: `SELECT (to_regclass('leasehold_migrations') IS NOT NULL)::int`,
		AppliedAt:       func() any { return d.fakeNow() },
	}
}

// pgMigrationTx is a pgx.Tx on its pooled connection as a
// driver.MigrationTx.
type pgMigrationTx struct {
	conn *pgxpool.Conn
	tx   pgx.Tx
}

func (t pgMigrationTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.Exec(ctx, q, args...)
	return err
}

func (t pgMigrationTx) QueryInt(ctx context.Context, q string) (n int, err error) {
	err = t.tx.QueryRow(ctx, q).Scan(&n)
	return n, err
}

func (t pgMigrationTx) Commit(ctx context.Context) error { return t.tx.Commit(ctx) }

// End rolls back (a no-op after Commit) even when ctx has ended, then
// returns the connection to the pool.
func (t pgMigrationTx) End(ctx context.Context) {
	_ = t.tx.Rollback(context.WithoutCancel(ctx))
	t.conn.Release()
}
