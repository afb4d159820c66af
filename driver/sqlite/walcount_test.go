package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver/sqlite"
)

// walFrame is one WAL frame: its header and one page (the default page
// size). The WAL-counting tests (TestAppendWALFrames, TestRunPathWALFrames,
// TestEventAppendWALFrames) divide the WAL's growth by it.
const walFrame = 24 + 4096

// openWALCounted opens a migrated store in a fresh file and returns it with
// the file's path (closed when the test ends).
func openWALCounted(t *testing.T) (*sqlite.Driver, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wal.db")
	d, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	_, err = d.Migrate(context.Background())
	require.NoError(t, err)
	return d, path
}

// noAutoCheckpoint turns the writer's automatic checkpoint off, so the WAL
// only grows and its size counts every frame committed since.
func noAutoCheckpoint(t *testing.T, d *sqlite.Driver) {
	t.Helper()
	ctx := context.Background()
	tx, err := d.BeginTx(ctx)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0")
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
}

// walSize is the size of the store's WAL file at path.
func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	return fi.Size()
}
