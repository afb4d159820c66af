package pgcluster_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/pgcluster"
)

// TestCommittedDataSurvivesImmediateStop: a fresh cluster runs with fsync
// on, on its own port, never :5432; a row committed before `pg_ctl stop -m
// immediate` is there after the next start (WAL replay), while the
// transaction left open by the stop is gone; clients see the stop as a
// dropped connection and reconnect to the same URL.
func TestCommittedDataSurvivesImmediateStop(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := pgcluster.Start(t)
	require.NotEqual(t, 5432, c.Port(), "never the shared server's port")
	require.True(t, c.Running())

	conn, err := pgx.Connect(ctx, c.URL())
	require.NoError(t, err)
	defer func() { _ = conn.Close(context.Background()) }()
	for setting, want := range map[string]string{"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on",
		"listen_addresses": "127.0.0.1"} {
		var got string
		require.NoError(t, conn.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got))
		require.Equal(t, want, got, setting)
	}
	_, err = conn.Exec(ctx, "CREATE TABLE kept (id int PRIMARY KEY, note text)")
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "INSERT INTO kept SELECT g, 'row ' || g FROM generate_series(1, 1000) g")
	require.NoError(t, err)
	// Left open across the stop: never committed, so never seen again.
	open, err := pgx.Connect(ctx, c.URL())
	require.NoError(t, err)
	defer func() { _ = open.Close(context.Background()) }()
	tx, err := open.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "INSERT INTO kept VALUES (1001, 'uncommitted')")
	require.NoError(t, err)

	require.NoError(t, c.Stop(ctx))
	require.False(t, c.Running())
	require.NoError(t, c.Stop(ctx), "stopping a stopped cluster is a no-op")
	require.Error(t, conn.Ping(ctx), "the stop dropped the client")
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	_, err = pgx.Connect(short, c.URL())
	cancelShort()
	require.Error(t, err, "nothing listens while stopped")

	require.NoError(t, c.Start(ctx))
	again, err := pgx.Connect(ctx, c.URL())
	require.NoError(t, err)
	defer func() { _ = again.Close(context.Background()) }()
	var n, maxID int
	require.NoError(t, again.QueryRow(ctx, "SELECT count(*), max(id) FROM kept").Scan(&n, &maxID))
	require.Equal(t, 1000, n, "every committed row survived the immediate stop")
	require.Equal(t, 1000, maxID, "the open transaction did not")

	// Restart is the same again.
	_, err = again.Exec(ctx, "INSERT INTO kept VALUES (1002, 'after the first restart')")
	require.NoError(t, err)
	require.NoError(t, c.Restart(ctx))
	third, err := pgx.Connect(ctx, c.URL())
	require.NoError(t, err)
	defer func() { _ = third.Close(context.Background()) }()
	require.NoError(t, third.QueryRow(ctx, "SELECT count(*) FROM kept").Scan(&n))
	require.Equal(t, 1001, n)
}

// TestCloseRemovesEverything: Close stops a running server and removes
// its folder; a second Close is a no-op; Start after Close is refused.
func TestCloseRemovesEverything(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := pgcluster.Start(t) // its cleanup's Close is the second call below
	dir := c.Dir()
	_, err := os.Stat(dir)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = os.Stat(dir)
	require.True(t, os.IsNotExist(err), "the folder is removed: %v", err)
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	defer cancelShort()
	_, err = pgx.Connect(short, c.URL())
	require.Error(t, err, "the server is gone")
	require.NoError(t, c.Close())
	require.Error(t, c.Start(ctx))
}

// TestMissingBinaries: a wrong BinDir is ErrNoBinaries, nothing created.
func TestMissingBinaries(t *testing.T) {
	t.Parallel()
	_, err := pgcluster.New(context.Background(), pgcluster.Config{BinDir: t.TempDir()})
	require.ErrorIs(t, err, pgcluster.ErrNoBinaries)
}
