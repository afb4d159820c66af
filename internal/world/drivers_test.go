package world_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
)

// forEachDriver runs fn against a fresh, migrated store of each driver,
// both on the real clock.
func forEachDriver(t *testing.T, fn func(t *testing.T, d driver.Driver)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, openSQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, openPostgres(t))
	})
}

func openSQLite(tb testing.TB) driver.Driver {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(tb.TempDir(), "lh.db")})
	require.NoError(tb, err)
	tb.Cleanup(func() { d.Close() })
	_, err = d.Migrate(ctx)
	require.NoError(tb, err)
	return d
}

func openPostgres(tb testing.TB) driver.Driver {
	ctx := context.Background()
	url, schema := testdb.Schema(tb)
	d, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema})
	require.NoError(tb, err)
	tb.Cleanup(func() { d.Close() })
	_, err = d.Migrate(ctx)
	require.NoError(tb, err)
	return d
}
