package drivertest_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
)

// TestHostileOutcomesAgreeAcrossStores is SPEC §5's differential test:
// the hostile corpus, driven through every entry point on SQLite and on
// Postgres by the one function of the conformance suite, must get the same
// typed outcome from both, call for call. With CI=true an unreachable
// Postgres fails it (internal/testdb), never skips it.
func TestHostileOutcomesAgreeAcrossStores(t *testing.T) {
	t.Parallel()
	// The two stores are driven side by side (the longest test of the
	// suite under -race), and compared once both are done.
	reps := make([]*drivertest.HostileReport, 2)
	t.Run("stores", func(t *testing.T) {
		for i, f := range []drivertest.Factory{sqliteHarness, postgresHarness} {
			t.Run([]string{"sqlite", "postgres"}[i], func(t *testing.T) {
				t.Parallel()
				reps[i] = drivertest.Hostile(t, f)
				t.Log(reps[i].Line())
			})
		}
	})
	if t.Failed() {
		return
	}
	diff := drivertest.Disagreements(reps[0], reps[1])
	t.Logf("hostile: %d calls on each store, disagreements=%d", reps[0].Calls, len(diff))
	require.Equal(t, reps[0].Calls, reps[1].Calls)
	require.Empty(t, diff, "the stores answer the same input differently")
}

func sqliteHarness(t *testing.T) *drivertest.Harness {
	ctx := context.Background()
	fake := clock.NewFake(drivertest.StartTime)
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db"), Clock: fake})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	return &drivertest.Harness{Driver: d, Clock: fake,
		Query: func(ctx context.Context, q string, dest ...any) error { return sqlite.QueryForTest(ctx, d, q, dest...) },
		OpenEmpty: func(t *testing.T) func(context.Context) (driver.Driver, error) {
			path := filepath.Join(t.TempDir(), "empty.db")
			return func(ctx context.Context) (driver.Driver, error) { return sqlite.Open(ctx, sqlite.Config{Path: path}) }
		},
		BeginTx: func(ctx context.Context) (*drivertest.CallerTx, error) {
			tx, err := d.BeginTx(ctx)
			if err != nil {
				return nil, err
			}
			return drivertest.SQLTx(tx), nil
		}}
}

func postgresHarness(t *testing.T) *drivertest.Harness {
	ctx := context.Background()
	fake := clock.NewFake(drivertest.StartTime)
	url, schema := testdb.Schema(t)
	// An 8 s pool wait, as driver/postgres's conformance harness has: CI
	// runs this beside the simulator on two cores, and the 2 s default ran
	// out there opening a connection to a loaded server.
	d, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, StoreClock: fake, AcquireTimeout: 8 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	return &drivertest.Harness{Driver: d, Clock: fake,
		Query: func(ctx context.Context, q string, dest ...any) error {
			return postgres.QueryForTest(ctx, d, q, dest...)
		},
		OpenEmpty: func(t *testing.T) func(context.Context) (driver.Driver, error) {
			url, schema := testdb.Schema(t)
			return func(ctx context.Context) (driver.Driver, error) {
				return postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, AcquireTimeout: 8 * time.Second})
			}
		},
		BeginTx: func(ctx context.Context) (*drivertest.CallerTx, error) {
			tx, err := d.BeginTx(ctx, pgx.TxOptions{})
			if err != nil {
				return nil, err
			}
			return drivertest.PgxTx(tx), nil
		}}
}

// TestDisagreementsFindsEveryDifference: the comparison itself can fail —
// a differing outcome, and a call only one store answered, are each named.
func TestDisagreementsFindsEveryDifference(t *testing.T) {
	t.Parallel()
	a := &drivertest.HostileReport{Store: "sqlite", Outcomes: map[string]string{"X/v": "accepted", "Y/v": "ErrInvalid", "Z/v": "ErrNotFound"}}
	b := &drivertest.HostileReport{Store: "postgres", Outcomes: map[string]string{"X/v": "accepted", "Y/v": "untyped", "W/v": "accepted"}}
	require.Equal(t, []string{
		"W/v: only postgres has it",
		"Y/v: sqlite ErrInvalid, postgres untyped",
		"Z/v: only sqlite has it",
	}, drivertest.Disagreements(a, b))
	require.Empty(t, drivertest.Disagreements(a, a))
}
