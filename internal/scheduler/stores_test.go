package scheduler_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/internal/testdb"
)

// storeKind opens a fresh, migrated store whose store clock is c.
type storeKind struct {
	name string
	open func(t *testing.T, c clock.Clock) (scheduler.Store, func(ctx context.Context, q string) error)
}

var storeKinds = []storeKind{
	{"sqlite", func(t *testing.T, c clock.Clock) (scheduler.Store, func(ctx context.Context, q string) error) {
		ctx := context.Background()
		d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db"), Clock: c})
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
		_, err = d.Migrate(ctx)
		require.NoError(t, err)
		return d, func(ctx context.Context, q string) error { return sqlite.ExecForTest(ctx, d, q) }
	}},
	{"postgres", func(t *testing.T, c clock.Clock) (scheduler.Store, func(ctx context.Context, q string) error) {
		ctx := context.Background()
		url, schema := testdb.Schema(t)
		d, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, StoreClock: c})
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
		_, err = d.Migrate(ctx)
		require.NoError(t, err)
		return d, func(ctx context.Context, q string) error { return postgres.ExecForTest(ctx, d, q) }
	}},
}
