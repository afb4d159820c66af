package leasehold_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// callerTx is a caller's own transaction on either store, as an
// application would hold it: the driver-native tx EnqueueTx takes, and the
// caller's own writes in it.
type callerTx struct {
	tx       any
	exec     func(ctx context.Context, q string) error
	commit   func(ctx context.Context) error
	rollback func(ctx context.Context) error
}

// beginCallerTx opens one with the store's own helper: sqlite.Driver.BeginTx
// (on the writer) or postgres.Driver.BeginTx (on the general pool, whose
// search_path reaches the test's schema).
func beginCallerTx(ctx context.Context, d leasehold.Driver) (*callerTx, error) {
	switch d := d.(type) {
	case *sqlite.Driver:
		tx, err := d.BeginTx(ctx)
		if err != nil {
			return nil, err
		}
		return &callerTx{tx: tx,
			exec:     func(ctx context.Context, q string) error { _, err := tx.ExecContext(ctx, q); return err },
			commit:   func(context.Context) error { return tx.Commit() },
			rollback: func(context.Context) error { return tx.Rollback() }}, nil
	case *postgres.Driver:
		tx, err := d.BeginTx(ctx, pgx.TxOptions{})
		if err != nil {
			return nil, err
		}
		return &callerTx{tx: tx,
			exec:     func(ctx context.Context, q string) error { _, err := tx.Exec(ctx, q); return err },
			commit:   tx.Commit,
			rollback: tx.Rollback}, nil
	}
	panic("beginCallerTx: unknown driver")
}

// execOn runs one statement of the caller's outside any transaction.
func execOn(t *testing.T, d leasehold.Driver, q string) {
	t.Helper()
	var err error
	switch d := d.(type) {
	case *sqlite.Driver:
		err = sqlite.ExecForTest(context.Background(), d, q)
	case *postgres.Driver:
		err = postgres.ExecForTest(context.Background(), d, q)
	}
	require.NoError(t, err)
}

// countOn is a one-number query of the caller's (read pool / general pool).
func countOn(t *testing.T, d leasehold.Driver, q string) int {
	t.Helper()
	var n int
	var err error
	switch d := d.(type) {
	case *sqlite.Driver:
		err = sqlite.QueryForTest(context.Background(), d, q, &n)
	case *postgres.Driver:
		err = postgres.QueryForTest(context.Background(), d, q, &n)
	}
	require.NoError(t, err)
	return n
}
