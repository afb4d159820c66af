package driver_test

import (
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
)

// TestMigrationVersionsRunWithoutAGap: the runner skips every version at
// or below a store's current one, so a migration numbered into a gap
// (0015, then 0018, and 0016 added later) would never run on a store
// already at 18. LoadMigrations refuses the gap, and a repeat.
func TestMigrationVersionsRunWithoutAGap(t *testing.T) {
	t.Parallel()
	files := func(names ...string) fstest.MapFS {
		m := fstest.MapFS{}
		for _, n := range names {
			m["migrations/"+n] = &fstest.MapFile{Data: []byte("SELECT 1;")}
		}
		return m
	}
	ms, err := driver.LoadMigrations(files("0002_b.sql", "0001_a.sql", "0003_c.sql"), "migrations")
	require.NoError(t, err)
	require.Len(t, ms, 3)
	require.Equal(t, "0003_c.sql", ms[2].Name)
	_, err = driver.LoadMigrations(files("0001_a.sql", "0002_b.sql", "0004_d.sql"), "migrations")
	require.ErrorContains(t, err, "version 4 where 3 was due")
	_, err = driver.LoadMigrations(files("0001_a.sql", "0002_b.sql", "0002_c.sql"), "migrations")
	require.ErrorContains(t, err, "where 3 was due")
	_, err = driver.LoadMigrations(files("0002_b.sql"), "migrations")
	require.ErrorContains(t, err, "version 2 where 1 was due")
}
