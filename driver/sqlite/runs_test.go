package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/runs"
)

// These are smoke tests of the SQLite run store; the behaviour every driver
// must have is in the shared conformance suite (driver/drivertest).

type runsBundle struct {
	ctx   context.Context
	d     *sqlite.Driver
	clock *clock.Fake
}

func setupRuns(t testing.TB) *runsBundle {
	t.Helper()
	ctx := context.Background()
	fake := clock.NewFake(drivertest.StartTime)
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "leasehold.db"), Clock: fake})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	return &runsBundle{ctx: ctx, d: d, clock: fake}
}

func (b *runsBundle) enqueue(t testing.TB, e runs.Enqueue) *driver.Run {
	t.Helper()
	out, err := b.d.RunEnqueue(b.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{e}})
	require.NoError(t, err)
	require.Len(t, out, 1)
	return out[0].Run
}

func (b *runsBundle) claim(t *testing.T, owner string, lease time.Duration) *driver.Run {
	t.Helper()
	got, err := b.d.RunClaim(b.ctx, &driver.RunClaimParams{Queue: "q", Owner: owner, Limit: 1, Lease: lease})
	require.NoError(t, err)
	require.Len(t, got, 1)
	return got[0]
}

func TestRunEnqueueClaimComplete(t *testing.T) {
	t.Parallel()
	b := setupRuns(t)
	r := b.enqueue(t, runs.Enqueue{Queue: "q", Payload: []byte(`{ "a": 1 }`)})
	require.Equal(t, runs.StateAvailable, r.State)
	require.Equal(t, `{"a":1}`, string(r.Payload))
	require.Equal(t, runs.DefaultAttempts, r.MaxAttempts)
	require.Equal(t, drivertest.StartTime, r.ScheduledAt)
	require.True(t, r.ExpiresAt.IsZero())
	require.Nil(t, r.Result)

	c := b.claim(t, "runner-1", time.Minute)
	require.Equal(t, r.ID, c.ID)
	require.Equal(t, runs.StateRunning, c.State)
	require.Equal(t, int64(1), c.Fence)
	require.Equal(t, 1, c.Attempt)
	require.Equal(t, "runner-1", c.Owner)
	require.Equal(t, drivertest.StartTime.Add(time.Minute), c.ExpiresAt)

	b.clock.Advance(time.Second)
	done, err := b.d.RunComplete(b.ctx, &driver.RunCompleteParams{ID: c.ID, Fence: c.Fence, Result: []byte(`{"ok": true}`)})
	require.NoError(t, err)
	require.Equal(t, runs.StateCompleted, done.State)
	require.Equal(t, `{"ok":true}`, string(done.Result))
	require.Equal(t, drivertest.StartTime.Add(time.Second), done.FinishedAt)
	require.Empty(t, done.Owner)
	require.True(t, done.ExpiresAt.IsZero())

	got, err := b.d.RunGet(b.ctx, &driver.RunGetParams{ID: c.ID})
	require.NoError(t, err)
	require.Equal(t, done, got)
}

func TestRunFencedCompleteAfterReclaimChangesNothing(t *testing.T) {
	t.Parallel()
	b := setupRuns(t)
	b.enqueue(t, runs.Enqueue{Queue: "q"})
	c := b.claim(t, "runner-1", time.Minute)

	b.clock.Advance(time.Minute) // expires_at <= now: expired
	res, err := b.d.RunReclaim(b.ctx, &driver.RunReclaimParams{})
	require.NoError(t, err)
	require.Len(t, res.Reclaimed, 1)
	re := res.Reclaimed[0]
	require.Equal(t, runs.StateAvailable, re.State)
	require.Equal(t, c.Fence+1, re.Fence)

	_, err = b.d.RunComplete(b.ctx, &driver.RunCompleteParams{ID: c.ID, Fence: c.Fence, Result: []byte(`1`)})
	require.ErrorIs(t, err, driver.ErrFenced)
	var fe *driver.RunFencedError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, re.Fence, fe.CurrentFence)
	require.Equal(t, runs.StateAvailable, fe.State)

	got, err := b.d.RunGet(b.ctx, &driver.RunGetParams{ID: c.ID})
	require.NoError(t, err)
	require.Equal(t, re, got)
}

func TestRunUniqueKeyUnderConcurrentEnqueues(t *testing.T) {
	t.Parallel()
	b := setupRuns(t)
	const n = 8
	results := make([]driver.RunEnqueued, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			out, err := b.d.RunEnqueue(b.ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{
				{Queue: "q", Payload: fmt.Appendf(nil, "%d", i), UniqueKey: "only-one"}}})
			errs[i] = err
			if err == nil {
				results[i] = out[0]
			}
		})
	}
	wg.Wait()
	fresh := 0
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, results[0].Run.ID, results[i].Run.ID)
		if !results[i].Existing {
			fresh++
		}
	}
	require.Equal(t, 1, fresh)
}

// The reclaim reason formats expires_at in SQL; it must read exactly as Go's
// RFC3339Nano would, whatever the fraction.
func TestRunReclaimReasonMatchesGoFormat(t *testing.T) {
	t.Parallel()
	for _, frac := range []time.Duration{0, 500 * time.Millisecond, 123456 * time.Microsecond, 100 * time.Microsecond, time.Microsecond} {
		t.Run(frac.String(), func(t *testing.T) {
			t.Parallel()
			b := setupRuns(t)
			b.enqueue(t, runs.Enqueue{Queue: "q", MaxAttempts: 1})
			c := b.claim(t, "runner/a@b", 10*time.Second+frac)
			b.clock.Advance(time.Hour)
			res, err := b.d.RunReclaim(b.ctx, &driver.RunReclaimParams{Limit: 5})
			require.NoError(t, err)
			require.Len(t, res.Reclaimed, 1)
			re := res.Reclaimed[0]
			require.Equal(t, runs.StateFailed, re.State) // attempts spent
			require.Equal(t, b.clock.Now().UTC(), re.FinishedAt)
			require.Equal(t, fmt.Sprintf("lease expired at %s (owner runner/a@b, fence %d)",
				c.ExpiresAt.Format(time.RFC3339Nano), c.Fence), re.Reason)
		})
	}
}
