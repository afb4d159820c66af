package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/lease"
)

// TestOpenPathExactFile: Config.Path names a file, not a URI. Characters a
// file: URI gives meaning to (? # % and a leading //) open exactly the file
// named, in WAL mode, and nothing else appears beside it (issue 17, defect 3).
func TestOpenPathExactFile(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"file:x.db", "a?b.db", "c#d.db", "e%41.db", "sp ace.db", "x&mode=memory.db", "q?mode=ro&_pragma=journal_mode(delete).db", "ü.db"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			d, err := sqlite.Open(ctx, sqlite.Config{Path: path})
			require.NoError(t, err)
			defer d.Close()
			_, err = d.Migrate(ctx)
			require.NoError(t, err)
			_, err = d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w", Home: "home", Term: 30 * time.Second})
			require.NoError(t, err)
			_, err = d.WorldGet(ctx, &driver.WorldGetParams{World: "w"})
			require.NoError(t, err)
			st, err := d.Settings(ctx)
			require.NoError(t, err)
			require.Equal(t, "wal", st.Values["journal_mode"])
			fi, err := os.Stat(path)
			require.NoError(t, err, "the file named by Path exists")
			require.True(t, fi.Mode().IsRegular())
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range ents {
				n := e.Name()
				require.Contains(t, []string{name, name + "-wal", name + "-shm"}, n, "no other file is created")
			}
		})
	}
}

// TestOpenPathAbsoluteDoubleSlash: a path beginning with // is a file path,
// not a URI authority.
func TestOpenPathAbsoluteDoubleSlash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := "/" + filepath.Join(t.TempDir(), "dbl.db")
	d, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	require.NoError(t, err)
	require.NoError(t, d.Close())
	_, err = os.Stat(path)
	require.NoError(t, err)
}

// TestOpenPathRefused: what cannot be a file name, and :memory: (one
// database per connection, no WAL), is refused at Open with ErrInvalid and
// creates nothing.
func TestOpenPathRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	for _, path := range []string{"", filepath.Join(dir, "f\x00g.db"), ":memory:", "file::memory:?cache=shared", "file:" + filepath.Join(dir, "u.db"), filepath.Join(dir, "d") + "/"} {
		d, err := sqlite.Open(ctx, sqlite.Config{Path: path})
		if err == nil {
			d.Close()
		}
		require.Error(t, err, "%q", path)
		require.True(t, errors.Is(err, lease.ErrInvalid), "%q: %v", path, err)
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents)
}
