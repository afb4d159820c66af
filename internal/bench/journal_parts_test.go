package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
)

// TestJournalPartsSQLite: every step of the parts ladder runs and commits
// what it says (the part steps' entries are in the journal table, the
// driver's appends in its world), a few slices only.
func TestJournalPartsSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "p.db")
	d, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	steps, err := SQLiteParts(ctx, d, path, PartsConfig{Rounds: 1, Slice: 20 * time.Millisecond})
	require.NoError(t, err)
	checkParts(t, ctx, d, steps, 7)
	// Counted, not timed: the floor commits one page, the head read none,
	// the head update one; the entry and its key add theirs.
	require.InDelta(t, 1, steps[0].WALPages(), 0.2, steps[0].Name)
	require.Zero(t, steps[1].WALBytes, steps[1].Name)
	require.InDelta(t, 1, steps[2].WALPages(), 0.2, steps[2].Name)
	require.Greater(t, steps[4].WALPages(), steps[3].WALPages(), "the key index adds a page")
}

// TestJournalPartsPostgres is TestJournalPartsSQLite on Postgres.
func TestJournalPartsPostgres(t *testing.T) {
	url := testdb.URL(t) // the project's rule: the local default, a loud skip outside CI, a failure in CI
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer admin.Close(ctx)
	schema := fmt.Sprintf("lh_parts_%d", time.Now().UnixNano())
	_, err = admin.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	defer admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	d, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema})
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	steps, err := PostgresParts(ctx, d, url, schema, PartsConfig{Rounds: 1, Slice: 20 * time.Millisecond})
	require.NoError(t, err)
	checkParts(t, ctx, d, steps, 9)
	for _, s := range steps {
		t.Logf("%-55s %d B", s.Name, s.StatementWALBytes)
	}
	// The head lock writes a row-lock record; the update and each insert
	// add theirs; the key adds its index entry.
	for i := 1; i <= 6; i++ {
		require.Positive(t, steps[i].StatementWALBytes, steps[i].Name)
	}
	require.Greater(t, steps[2].StatementWALBytes, steps[1].StatementWALBytes, "the update")
	require.Greater(t, steps[3].StatementWALBytes, steps[2].StatementWALBytes, "the entry")
	require.Greater(t, steps[5].StatementWALBytes, steps[3].StatementWALBytes, "the key")
}

func checkParts(t *testing.T, ctx context.Context, d driver.Driver, steps []PartStep, n int) {
	require.Len(t, steps, n)
	for _, s := range steps {
		require.Positive(t, s.N, s.Name)
		require.Positive(t, s.Mean(), s.Name)
	}
	driverAppends := steps[n-2].N + steps[n-1].N
	got, err := d.JournalRead(ctx, &driver.JournalReadParams{World: "real", From: 2, Limit: 1000})
	require.NoError(t, err)
	require.Len(t, got, driverAppends, "every driver append is in its world's journal")
	for _, e := range got {
		require.EqualValues(t, "bench", e.Kind)
	}
}
