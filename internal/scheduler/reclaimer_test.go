package scheduler_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestReclaimerReclaimsWithinOnePeriodOfExpiry: a run whose holder stopped
// renewing is back in the queue, fenced, on the first tick at or after its
// expiry, measured on the store clock (one fake clock drives both here).
func TestReclaimerReclaimsWithinOnePeriodOfExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db"), Clock: fake})
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Migrate(ctx)
	require.NoError(t, err)

	timing := lease.RunDefaults()
	_, err = d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: make([]runs.Enqueue, 250)})
	require.ErrorIs(t, err, lease.ErrInvalid, "queue is required")
	batch := make([]runs.Enqueue, 250)
	for i := range batch {
		batch[i] = runs.Enqueue{Queue: "q"}
	}
	_, err = d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: batch})
	require.NoError(t, err)
	claimed, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "dead", Limit: 250, Lease: timing.Lease})
	require.NoError(t, err)
	require.Len(t, claimed, 250)
	expiry := claimed[0].ExpiresAt

	passes := make(chan int, 100)
	r := scheduler.NewReclaimer(d, scheduler.ReclaimerConfig{Clock: fake, Batch: 100, Logger: slog.New(slog.DiscardHandler),
		OnPass: func(n int, err error) {
			assert.NoError(t, err)
			passes <- n
		}})
	require.NoError(t, r.Start(ctx))
	defer r.Stop(context.Background())

	// Ticks before expiry reclaim nothing. Each period is one timer armed
	// after the pass before it: wait for it before moving the clock.
	for fake.Now().Add(timing.Poll).Before(expiry) {
		fake.BlockUntil(1)
		fake.Advance(timing.Poll)
		require.Zero(t, <-passes)
	}
	// The first tick at or after expiry reclaims all 250, in three batches.
	fake.BlockUntil(1)
	fake.Advance(timing.Poll)
	require.Equal(t, 250, <-passes)
	lag := fake.Now().Sub(expiry)
	require.Less(t, lag, timing.Poll+time.Nanosecond, "reclaimed within P of expiry")
	got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "alive", Limit: 1000, Lease: timing.Lease})
	require.NoError(t, err)
	require.Len(t, got, 250)
	require.Equal(t, int64(3), got[0].Fence)
}
