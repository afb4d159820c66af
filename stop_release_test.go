package leasehold_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// twoStores opens two drivers on one store of kind k (two processes'
// views of the same file or schema).
func twoStores(t *testing.T, k string) (leasehold.Driver, leasehold.Driver) {
	ctx := context.Background()
	if k == "sqlite" {
		path := filepath.Join(t.TempDir(), "lh.db")
		a, err := sqlite.Open(ctx, sqlite.Config{Path: path})
		require.NoError(t, err)
		b, err := sqlite.Open(ctx, sqlite.Config{Path: path})
		require.NoError(t, err)
		return a, b
	}
	url, schema := testdb.Schema(t)
	open := func() leasehold.Driver {
		d, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		return d
	}
	return open(), open()
}

// TestStopReleasesRunsForAnotherWorker (issue 16, must-show 5, second
// half): worker A holds a run whose handler does not finish; A's Stop
// waits its grace (150ms), cancels the handler and releases the run with
// a fenced write; worker B, in another client over the same store,
// claims it on its next poll. Measured on the store clock: B's claim
// comes within the grace plus one poll period (plus slack for a loaded
// machine) of the Stop call — far under T_lease (30s), when the
// reclaimer would have taken it.
func TestStopReleasesRunsForAnotherWorker(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"sqlite", "postgres"} {
		t.Run(k, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			da, db := twoStores(t, k)
			quiet := leasehold.Config{Logger: slog.New(slog.DiscardHandler)}
			ca, err := leasehold.NewClient(ctx, da, quiet)
			require.NoError(t, err)
			t.Cleanup(func() { ca.Close() })
			cb, err := leasehold.NewClient(ctx, db, quiet)
			require.NoError(t, err)
			t.Cleanup(func() { cb.Close() })

			timing := lease.Timing{Lease: 30 * time.Second, Renew: 5 * time.Second, Drain: time.Second, Stop: 15 * time.Second, Skew: 5 * time.Second, Poll: time.Second}
			const poll = 50 * time.Millisecond
			cfg := func(owner string) leasehold.WorkerConfig {
				return leasehold.WorkerConfig{Owner: owner, Queues: map[string]int{"q": 1}, Timing: timing, Mode: leasehold.ModeSync,
					ClockCheck: -1, FetchInterval: poll}
			}
			wa, err := ca.NewWorker(cfg("a"))
			require.NoError(t, err)
			started := make(chan int64, 1)
			wa.Handle("q", func(ctx context.Context, r *leasehold.RunHandle) error {
				started <- r.ID
				<-ctx.Done() // a handler that finishes only when told to
				return ctx.Err()
			})
			out, err := ca.Enqueue(ctx, leasehold.Enqueue{Queue: "q", Payload: []byte(`{}`), MaxAttempts: 1})
			require.NoError(t, err)
			id := out[0].Run.ID
			require.NoError(t, wa.Start(ctx))
			require.Equal(t, id, <-started)
			held, err := ca.Run(ctx, id)
			require.NoError(t, err)
			require.Equal(t, "a", held.Owner)

			wb, err := cb.NewWorker(cfg("b"))
			require.NoError(t, err)
			claimedB := make(chan *leasehold.Run, 1)
			wb.Handle("q", func(ctx context.Context, r *leasehold.RunHandle) error {
				row, err := cb.Run(ctx, r.ID)
				if err != nil {
					return err
				}
				claimedB <- row
				return nil
			})
			require.NoError(t, wb.Start(ctx))
			t.Cleanup(func() { _ = wb.Stop(ctx) })

			stopAt, err := da.StoreNow(ctx)
			require.NoError(t, err)
			sctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
			err = wa.Stop(sctx)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded, "the grace ran out: the second stage")

			var rb *leasehold.Run
			select {
			case rb = <-claimedB:
			case <-time.After(20 * time.Second):
				t.Fatal("worker b never claimed the released run")
			}
			require.Equal(t, "b", rb.Owner)
			require.Equal(t, held.Fence+1, rb.Fence, "a new claim, a new fence")
			require.Equal(t, 1, rb.Attempt, "the interrupted attempt was given back: a run of one attempt runs again")
			require.True(t, strings.HasPrefix(rb.Reason, "released at worker stop (owner a)"), rb.Reason)
			claimB := rb.ExpiresAt.Add(-timing.Lease) // the claim's store time
			gap := claimB.Sub(stopAt)
			t.Logf("%s: Stop called at %s (store clock), grace 150ms; b claimed at %s: %s after the Stop call (T_lease %s, poll %s)",
				k, stopAt.Format(time.RFC3339Nano), claimB.Format(time.RFC3339Nano), gap, timing.Lease, poll)
			require.Less(t, gap, 150*time.Millisecond+poll+time.Second, "within the grace plus one poll (and slack), not T_lease")
			require.Less(t, gap, timing.Lease/10)
			done := settled(t, cb, id, func(r *leasehold.Run) bool { return r.State == runs.StateCompleted })
			require.Equal(t, rb.Fence, done.Fence)
		})
	}
}

// TestStopWithinGraceLetsHandlersFinish: the first stage — a handler that
// finishes within the grace completes its run as usual; nothing is
// released.
func TestStopWithinGraceLetsHandlersFinish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openSQLite(t, leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
	w, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"q": 1}, ClockCheck: -1, FetchInterval: 5 * time.Millisecond})
	require.NoError(t, err)
	started, finish := make(chan struct{}), make(chan struct{})
	w.Handle("q", func(ctx context.Context, r *leasehold.RunHandle) error {
		close(started)
		<-finish
		return nil
	})
	out, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q", Payload: []byte(`{}`)})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	<-started
	stopped := make(chan error, 1)
	go func() { stopped <- w.Stop(ctx) }() // no deadline: waits for the handler
	close(finish)
	require.NoError(t, <-stopped)
	r, err := c.Run(ctx, out[0].Run.ID)
	require.NoError(t, err)
	require.Equal(t, runs.StateCompleted, r.State)
	require.False(t, errors.Is(err, context.DeadlineExceeded))
}
