package pgcluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/pgcluster"
)

// TestStandbyKillPromote: a synchronous standby made by pg_basebackup
// streams from its primary (pg_stat_replication says sync); a row
// committed on the primary is on the standby when the commit returns; after
// Kill (SIGKILL to every server process) nothing answers on the primary's
// port, and after Promote the standby takes writes and holds every row.
func TestStandbyKillPromote(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	primary := pgcluster.StartConfig(t, pgcluster.Config{Settings: map[string]string{"synchronous_standby_names": "s1"}})
	standby := pgcluster.StartStandby(t, primary, "s1", pgcluster.Config{})
	require.NotEqual(t, primary.Port(), standby.Port())

	pc, err := pgx.Connect(ctx, primary.URL())
	require.NoError(t, err)
	defer func() { _ = pc.Close(context.Background()) }()
	require.Eventually(t, func() bool {
		var state string
		err := pc.QueryRow(ctx, "SELECT sync_state FROM pg_stat_replication WHERE application_name = 's1'").Scan(&state)
		return err == nil && state == "sync"
	}, time.Minute, 20*time.Millisecond, "the standby never became synchronous")

	_, err = pc.Exec(ctx, "CREATE TABLE kept (id int PRIMARY KEY)")
	require.NoError(t, err)
	_, err = pc.Exec(ctx, "INSERT INTO kept SELECT generate_series(1, 100)")
	require.NoError(t, err)

	require.NoError(t, primary.Kill())
	require.False(t, primary.Running())
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	_, err = pgx.Connect(short, primary.URL())
	cancelShort()
	require.Error(t, err, "nothing listens on the killed primary")

	sc, err := pgx.Connect(ctx, standby.URL())
	require.NoError(t, err)
	defer func() { _ = sc.Close(context.Background()) }()
	var readOnly string
	require.NoError(t, sc.QueryRow(ctx, "SHOW transaction_read_only").Scan(&readOnly))
	require.Equal(t, "on", readOnly, "a standby before promotion")
	require.NoError(t, standby.Promote(ctx))
	_, err = sc.Exec(ctx, "INSERT INTO kept VALUES (101)")
	require.NoError(t, err, "the promoted standby takes writes")
	var n int
	require.NoError(t, sc.QueryRow(ctx, "SELECT count(*) FROM kept").Scan(&n))
	require.Equal(t, 101, n, "every row committed on the primary is on the promoted standby")
}
