package scheduler_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/runs"
)

// TestReclaimedRunIsWorkedNextAheadOfTheBacklog (docs/design/run-order.md):
// a worker died holding run X; 5,000 runs were queued after it. Once X's
// lease expires on the store clock, one reclaimer pass puts it back, and a
// fresh worker with one slot works X first — not after the backlog, as when
// the reclaim sent it to the back of the queue. Both stores.
func TestReclaimedRunIsWorkedNextAheadOfTheBacklog(t *testing.T) {
	t.Parallel()
	const backlog = 5000
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			quiet := slog.New(slog.DiscardHandler)
			storeClock := clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
			store, _ := sk.open(t, storeClock)
			enq, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
			require.NoError(t, err)
			x := enq[0].Run.ID
			held, err := store.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "dead", Limit: 1, Lease: 30 * time.Second})
			require.NoError(t, err)
			require.Len(t, held, 1) // and the holder dies: it never renews
			storeClock.Advance(time.Second)
			batch := make([]runs.Enqueue, backlog)
			for i := range batch {
				batch[i] = runs.Enqueue{Queue: "q"}
			}
			_, err = store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: batch})
			require.NoError(t, err)
			storeClock.Advance(30 * time.Second)

			n, err := scheduler.NewReclaimer(store, scheduler.ReclaimerConfig{Logger: quiet}).ReclaimOnce(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)

			events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
			require.NoError(t, events.Start(ctx))
			t.Cleanup(func() { _ = events.Stop(ctx) })
			w, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Owner: "successor", Queues: map[string]int{"q": 1},
				ClockCheck: -1, Logger: quiet})
			require.NoError(t, err)
			first := make(chan int64, 1)
			w.Handle("q", func(_ context.Context, r *scheduler.Run) error {
				select {
				case first <- r.ID:
				default:
				}
				return nil
			})
			require.NoError(t, w.Start(ctx))
			got := <-first
			require.NoError(t, w.Stop(ctx))
			require.Equal(t, x, got, "the reclaimed run is worked first, ahead of %d queued", backlog)
			r, err := store.RunGet(ctx, &driver.RunGetParams{ID: x})
			require.NoError(t, err)
			require.Equal(t, runs.StateCompleted, r.State)
			require.Equal(t, 2, r.Attempt)
			require.Equal(t, enq[0].Run.ScheduledAt, r.ScheduledAt, "its place: the scheduled time it was enqueued with")
		})
	}
}
