package failover

import (
	"context"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/runs"
)

// TestSynchronousStandbyStallIsNeverAcknowledged: while the synchronous
// standby receives nothing (its walreceiver stopped with SIGSTOP), a write
// commits on the primary but is never answered — PostgreSQL turns off
// statement_timeout before the commit's wait for the standby, so the
// driver's StatementTimeout does not end it either — and the caller's
// deadline fails it: an unknown outcome, never an acknowledgement that
// only the primary holds. Writes stall for as long as the standby does;
// the runbook (docs/operations/ha.md) says why two standbys under
// synchronous_standby_names = 'ANY 1 (…)' avoid it.
func TestSynchronousStandbyStallIsNeverAcknowledged(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	p := newPair(t, true)
	d, err := postgres.Open(ctx, postgres.Config{URL: p.url(), Logger: slog.New(slog.DiscardHandler),
		AcquireTimeout: 200 * time.Millisecond, StatementTimeout: 500 * time.Millisecond})
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	_, err = d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", Payload: []byte(`{}`)}}})
	require.NoError(t, err, "with the standby streaming, a write is answered")

	sc, err := pgx.Connect(ctx, p.standby.URL())
	require.NoError(t, err)
	defer func() { _ = sc.Close(context.Background()) }()
	var pid int
	require.NoError(t, sc.QueryRow(ctx, "SELECT pid FROM pg_stat_wal_receiver").Scan(&pid))
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()

	// Four times the statement timeout: the wait for the standby outlives it.
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
	start := time.Now()
	_, err = d.RunEnqueue(wctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", Payload: []byte(`{"n":2}`)}}})
	wcancel()
	took := time.Since(start)
	require.Error(t, err, "a write the standby has not flushed was acknowledged")
	require.GreaterOrEqual(t, took, 2*time.Second-50*time.Millisecond, "failed before its deadline: %v", err)
	t.Logf("standby stalled: the write failed at its deadline after %v (%v); statement_timeout 500ms did not end the wait",
		took.Round(time.Millisecond), err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	// Once the standby receives again, writes are answered again.
	require.Eventually(t, func() bool {
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
		defer wcancel()
		_, err := d.RunEnqueue(wctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", Payload: []byte(`{"n":3}`)}}})
		return err == nil
	}, patience, 50*time.Millisecond)
}
