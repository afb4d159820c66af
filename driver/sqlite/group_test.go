package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// openGroupTest opens a migrated store in a fresh file.
func openGroupTest(t *testing.T) *Driver {
	t.Helper()
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "group.db")})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	return d
}

// waitGroup waits until a leader runs and exactly pending ops are queued
// behind it (a count, polled; the bound only ends a broken test).
func waitGroup(t *testing.T, s *store, pending int) {
	t.Helper()
	for i := 0; ; i++ {
		s.group.mu.Lock()
		n, leading := len(s.group.pending), s.group.leading
		s.group.mu.Unlock()
		if n == pending && leading {
			return
		}
		require.Less(t, i, 10000, "%d ops queued, leader %v; want %d queued behind a leader", n, leading, pending)
		time.Sleep(time.Millisecond)
	}
}

func countRuns(t *testing.T, d *Driver, state runs.State) int {
	t.Helper()
	var n int
	require.NoError(t, d.s.r.QueryRow(`SELECT count(*) FROM runs WHERE queue = 'q' AND state = ?`, string(state)).Scan(&n))
	return n
}

func enqueueQ(n int) *driver.RunEnqueueParams {
	es := make([]runs.Enqueue, n)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "q"}
	}
	return &driver.RunEnqueueParams{Runs: es}
}

// TestGroupCommitShares: writes that queue for the writer while it is busy
// share one transaction. With the writer held (the leader waits for the
// connection), an enqueue, a claim, an op that writes a run and fails, and
// another enqueue queue in turn: 4 ops, 1 transaction. The claim sees the
// first enqueue's runs and not the second's, the failing op's run is
// rolled back alone, and its neighbours commit.
func TestGroupCommitShares(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := openGroupTest(t)
	s := d.s
	// Prepare the statements while the writer is free (ops never prepare).
	_, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "o", Limit: 1, Lease: time.Minute})
	require.NoError(t, err)
	groups0, ops0 := s.group.groups.Load(), s.group.ops.Load()

	hold, err := d.BeginTx(ctx) // the one writer connection, held
	require.NoError(t, err)
	var wg sync.WaitGroup
	var first, second []driver.RunEnqueued
	var claimed []*driver.Run
	var firstErr, claimErr, failErr, secondErr error
	wg.Go(func() { first, firstErr = d.RunEnqueue(ctx, enqueueQ(3)) })
	waitGroup(t, s, 1)
	wg.Go(func() {
		claimed, claimErr = d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "o", Limit: 100, Lease: time.Minute})
	})
	waitGroup(t, s, 2)
	planted := errors.New("planted")
	wg.Go(func() {
		failErr = s.inGroupTx(ctx, "failing", func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO runs (queue, payload, priority, state, max_attempts, scheduled_at, created_at)
				VALUES ('q', x'', 0, 'available', 1, 0, 0)`); err != nil {
				return err
			}
			return planted
		})
	})
	waitGroup(t, s, 3)
	wg.Go(func() { second, secondErr = d.RunEnqueue(ctx, enqueueQ(2)) })
	waitGroup(t, s, 4)
	require.NoError(t, hold.Rollback())
	wg.Wait()

	require.NoError(t, firstErr)
	require.NoError(t, claimErr)
	require.ErrorIs(t, failErr, planted)
	require.NoError(t, secondErr)
	require.Len(t, first, 3)
	require.Len(t, second, 2)
	require.Len(t, claimed, 3, "the claim, queued after the first enqueue, claims its runs")
	for i, r := range claimed {
		require.Equal(t, first[i].Run.ID, r.ID)
	}
	require.Equal(t, 3, countRuns(t, d, runs.StateRunning))
	require.Equal(t, 2, countRuns(t, d, runs.StateAvailable), "the second enqueue committed; the failing op's run did not")
	require.EqualValues(t, 1, s.group.groups.Load()-groups0, "transactions")
	require.EqualValues(t, 4, s.group.ops.Load()-ops0, "ops")
}

// TestGroupCommitDropsCancelled: a caller whose context ends while its op
// waits in the queue returns the context's error, and the op is never
// written.
func TestGroupCommitDropsCancelled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := openGroupTest(t)
	s := d.s
	_, err := d.RunEnqueue(ctx, enqueueQ(1)) // prepares the statements
	require.NoError(t, err)
	groups0, ops0 := s.group.groups.Load(), s.group.ops.Load()

	hold, err := d.BeginTx(ctx)
	require.NoError(t, err)
	var wg sync.WaitGroup
	var firstErr error
	wg.Go(func() { _, firstErr = d.RunEnqueue(ctx, enqueueQ(1)) })
	waitGroup(t, s, 1)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := d.RunEnqueue(cctx, enqueueQ(5)); done <- err }()
	waitGroup(t, s, 2)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	require.NoError(t, hold.Rollback())
	wg.Wait()
	require.NoError(t, firstErr)
	require.Equal(t, 2, countRuns(t, d, runs.StateAvailable), "the cancelled enqueue wrote nothing")
	require.EqualValues(t, 1, s.group.groups.Load()-groups0, "transactions")
	require.EqualValues(t, 1, s.group.ops.Load()-ops0, "the dropped op was not run")
}
