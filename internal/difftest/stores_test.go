package difftest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
)

// store is one side of the comparison: a migrated store behind
// driver.Validating and the way to run raw SQL under it (for the reset).
type store struct {
	name  string
	d     driver.Driver
	exec  func(ctx context.Context, sql string) error
	query func(ctx context.Context, sql string, dest ...any) error
}

// pair is both stores, sharing one fake store clock: every time either
// store reports is read from the same clock at the same logical instant,
// so times compare as they are, and an "advance the clock" op moves both.
type pair struct {
	clock *clock.Fake
	lite  *store
	pg    *store
}

// txTable is the caller's own table that RunTx functions write to, in both
// stores (the commonest transactional effect: a write to the same
// database).
const txTable = "difftest_tx"

// resetTables are deleted before every execution, children first. Deleting
// rows is cheaper than a fresh schema or TRUNCATE per execution (Postgres
// makes new relation files on TRUNCATE) and leaves the drivers' prepared
// statements valid. Run ids are not reset (Postgres identities never go
// back); the comparison maps ids to the order they were first seen.
var resetTables = []string{"run_events", "run_effects", "runs", "journal_rejections", "journal_entries", "worlds", txTable}

// openPair opens one fresh SQLite file and one fresh Postgres schema for
// the whole fuzz worker process (tb is the *testing.F): opening a schema
// per execution would cost more than the execution. Each execution starts
// with reset. Under CI=true an unreachable Postgres fails (testdb.URL).
func openPair(tb testing.TB) *pair {
	tb.Helper()
	ctx := context.Background()
	fake := clock.NewFake(drivertest.StartTime)

	lite, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(tb.TempDir(), "diff.db"), Clock: fake})
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, lite.Close()) })
	_, err = lite.Migrate(ctx)
	require.NoError(tb, err)

	url, schema := testdb.Schema(tb)
	pg, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, StoreClock: fake})
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, pg.Close()) }) // before testdb drops the schema
	_, err = pg.Migrate(ctx)
	require.NoError(tb, err)

	p := &pair{
		clock: fake,
		lite: &store{name: "sqlite", d: driver.Validating(lite), exec: func(ctx context.Context, q string) error {
			return sqlite.ExecForTest(ctx, lite, q)
		}, query: func(ctx context.Context, q string, dest ...any) error {
			return sqlite.QueryForTest(ctx, lite, q, dest...)
		}},
		pg: &store{name: "postgres", d: driver.Validating(pg), exec: func(ctx context.Context, q string) error {
			return postgres.ExecForTest(ctx, pg, q)
		}, query: func(ctx context.Context, q string, dest ...any) error {
			return postgres.QueryForTest(ctx, pg, q, dest...)
		}},
	}
	require.NoError(tb, p.lite.exec(ctx, "CREATE TABLE "+txTable+" (run_id INTEGER NOT NULL, note TEXT NOT NULL)"))
	require.NoError(tb, p.pg.exec(ctx, "CREATE TABLE "+txTable+" (run_id bigint NOT NULL, note text NOT NULL)"))
	return p
}

// reset empties both stores and sets the clock back to its start, so an
// execution sees no trace of the one before (the unique-key index, the
// reclaim and the expiry scan are global, so per-execution names would not
// isolate them).
func (p *pair) reset(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	for _, s := range []*store{p.lite, p.pg} {
		for _, t := range resetTables {
			require.NoError(tb, s.exec(ctx, "DELETE FROM "+t), "%s: reset %s", s.name, t)
		}
	}
	p.clock.Set(drivertest.StartTime)
}
