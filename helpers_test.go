package leasehold_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// openSQLite is a client over a fresh SQLite file, closed when the test ends.
func openSQLite(t *testing.T, cfg leasehold.Config) *leasehold.Client {
	t.Helper()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db")})
	require.NoError(t, err)
	c, err := leasehold.NewClient(ctx, d, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}
