package scheduler

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver/sqlite"
)

// openSQLite opens a migrated SQLite store in the test's temporary
// directory, closed when the test ends.
func openSQLite(t *testing.T) *sqlite.Driver {
	t.Helper()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db")})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	return d
}
