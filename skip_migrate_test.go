package leasehold_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
)

// TestSkipMigrateOnAnUnmigratedStoreIsTyped (issue 17, defect 10): with
// SkipMigrate on a store never migrated, NewClient used to succeed and the
// first call fail with a raw "no such table" (SQLite) or SQLSTATE 42P01
// (Postgres). It is now refused at open with ErrNotMigrated, whose
// message says what to run, on both stores alike; the check writes
// nothing, and once the store is migrated the same open succeeds.
func TestSkipMigrateOnAnUnmigratedStoreIsTyped(t *testing.T) {
	t.Parallel()
	for _, s := range []struct {
		name   string
		opener func(t *testing.T) func() leasehold.Driver // one store, opened as often as asked
	}{
		{"sqlite", func(t *testing.T) func() leasehold.Driver {
			path := filepath.Join(t.TempDir(), "lh.db")
			return func() leasehold.Driver {
				d, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
				require.NoError(t, err)
				return d
			}
		}},
		{"postgres", func(t *testing.T) func() leasehold.Driver {
			url, schema := testdb.Schema(t)
			return func() leasehold.Driver {
				d, err := postgres.Open(context.Background(), postgres.Config{URL: url, Schema: schema})
				require.NoError(t, err)
				return d
			}
		}},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			open := s.opener(t)
			for range 2 { // twice: the refusal created nothing (no version table)
				_, err := leasehold.NewClient(ctx, open(), leasehold.Config{SkipMigrate: true}) // closes the driver
				require.ErrorIs(t, err, leasehold.ErrNotMigrated)
				require.ErrorContains(t, err, "store not migrated: run `leasehold migrate`")
			}
			c, err := leasehold.NewClient(ctx, open(), leasehold.Config{}) // migrates
			require.NoError(t, err)
			require.NoError(t, c.Close())
			c, err = leasehold.NewClient(ctx, open(), leasehold.Config{SkipMigrate: true})
			require.NoError(t, err)
			_, err = c.Worlds(ctx, "", 10)
			require.NoError(t, err)
			require.NoError(t, c.Close())
		})
	}
}
