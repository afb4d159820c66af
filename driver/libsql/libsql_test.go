package libsql_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
	"github.com/leasehold/leasehold/driver/libsql"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// harness opens a fresh, migrated libSQL file with a fake store clock, as
// driver/sqlite's harness does for modernc.
func harness(t *testing.T) *drivertest.Harness {
	t.Helper()
	ctx := context.Background()
	fake := clock.NewFake(drivertest.StartTime)
	path := filepath.Join(t.TempDir(), "leasehold.db")
	d, err := libsql.Open(ctx, libsql.Config{Path: path, Clock: fake})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	return &drivertest.Harness{Driver: d, Clock: fake, Exec: func(ctx context.Context, q string) error {
		return sqlite.ExecForTest(ctx, d, q)
	}, Query: func(ctx context.Context, q string, dest ...any) error {
		return sqlite.QueryForTest(ctx, d, q, dest...)
	}, OpenEmpty: func(t *testing.T) func(context.Context) (driver.Driver, error) {
		path := filepath.Join(t.TempDir(), "empty.db")
		return func(ctx context.Context) (driver.Driver, error) { return libsql.Open(ctx, libsql.Config{Path: path}) }
	}, BeginTx: func(ctx context.Context) (*drivertest.CallerTx, error) {
		tx, err := d.BeginTx(ctx)
		if err != nil {
			return nil, err
		}
		return drivertest.SQLTx(tx), nil
	}}
}

// TestConformance: the whole conformance suite, the same cases as SQLite
// (modernc) and Postgres.
func TestConformance(t *testing.T) {
	t.Parallel()
	n := drivertest.Exercise(t, harness)
	require.Equal(t, len(drivertest.Cases()), n)
}

// TestSettingsAreDurable: the pragmas the connector runs are in force —
// WAL and synchronous=FULL, as with modernc.
func TestSettingsAreDurable(t *testing.T) {
	t.Parallel()
	h := harness(t)
	s, err := h.Driver.Settings(context.Background())
	require.NoError(t, err)
	require.Equal(t, "wal", s.Values["journal_mode"])
	require.Equal(t, "2 (FULL)", s.Values["synchronous"])
}
