package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// holdLock opens a transaction of its own in schema that runs lockSQL (a
// SELECT … FOR <mode> modifying nothing) and returns it, still open, with
// its backend's pid.
func holdLock(t *testing.T, url, schema, lockSQL string, args ...any) (pgx.Tx, uint32) {
	t.Helper()
	ctx := context.Background()
	locker, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { locker.Close(context.Background()) })
	_, err = locker.Exec(ctx, "SET search_path = "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	tx, err := locker.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, lockSQL, args...)
	require.NoError(t, err)
	var pid uint32
	require.NoError(t, tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
	return tx, pid
}

// waitBlockedBy returns the server's clock when a backend was first seen
// waiting on lockerPID's lock: a signal, polled a bounded number of times
// on a connection of its own, not a guessed time. The waiter's statement
// read its clock earlier still.
func waitBlockedBy(t *testing.T, url string, lockerPID uint32, what string) time.Time {
	t.Helper()
	ctx := context.Background()
	watch, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer watch.Close(context.Background())
	var seenAt time.Time
	for range 100000 {
		err := watch.QueryRow(ctx, `SELECT clock_timestamp() FROM pg_stat_activity
			WHERE $1::int = ANY (pg_blocking_pids(pid))`, int32(lockerPID)).Scan(&seenAt)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		require.NoError(t, err)
		return seenAt
	}
	require.FailNow(t, what+" never waited for the lock")
	return time.Time{}
}

// sleepPastExpiry is the one unavoidable wait of the lock-wait tests: the
// server sleeps until its clock has passed the expires_at that
// expirySQL (one row, its first argument the row's id) reads, and says
// so.
func sleepPastExpiry(t *testing.T, tx pgx.Tx, expirySQL string, id any) {
	t.Helper()
	ctx := context.Background()
	var past bool
	for range 100 {
		require.NoError(t, tx.QueryRow(ctx, `SELECT pg_sleep(greatest(extract(epoch FROM e.expires_at - clock_timestamp()), 0) + 0.005),
			clock_timestamp() > e.expires_at FROM (`+expirySQL+`) e`, id).Scan(nil, &past))
		if past {
			return
		}
	}
	require.FailNow(t, "the server's clock did not pass the expiry")
}
