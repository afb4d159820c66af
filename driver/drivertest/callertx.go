package drivertest

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
)

// SQLTx is a caller's *sql.Tx (SQLite) as a CallerTx.
func SQLTx(tx *sql.Tx) *CallerTx {
	return &CallerTx{Tx: tx,
		Exec:     func(ctx context.Context, q string) error { _, err := tx.ExecContext(ctx, q); return err },
		Commit:   func(context.Context) error { return tx.Commit() },
		Rollback: func(context.Context) error { return tx.Rollback() }}
}

// PgxTx is a caller's pgx.Tx (Postgres) as a CallerTx.
func PgxTx(tx pgx.Tx) *CallerTx {
	return &CallerTx{Tx: tx,
		Exec:     func(ctx context.Context, q string) error { _, err := tx.Exec(ctx, q); return err },
		Commit:   tx.Commit,
		Rollback: tx.Rollback}
}
