package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// harness opens a fresh, migrated SQLite file with a fake store clock.
func harness(t *testing.T) *drivertest.Harness { return open(t) }

func open(t testing.TB) *drivertest.Harness {
	t.Helper()
	ctx := context.Background()
	fake := clock.NewFake(drivertest.StartTime)
	path := filepath.Join(t.TempDir(), "leasehold.db")
	d, err := sqlite.Open(ctx, sqlite.Config{Path: path, Clock: fake})
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
		return func(ctx context.Context) (driver.Driver, error) { return sqlite.Open(ctx, sqlite.Config{Path: path}) }
	}, BeginTx: func(ctx context.Context) (*drivertest.CallerTx, error) {
		tx, err := d.BeginTx(ctx)
		if err != nil {
			return nil, err
		}
		return drivertest.SQLTx(tx), nil
	}}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	n := drivertest.Exercise(t, harness)
	require.Equal(t, len(drivertest.Cases()), n)
}
