package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/runs"
)

// TestSubscribeInOrderAndResume: a subscriber receives a run's events once
// they are durable, in order, and a second subscription resumes after a
// sequence number without missing or repeating any.
func TestSubscribeInOrderAndResume(t *testing.T) {
	t.Parallel()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			quiet := slog.New(slog.DiscardHandler)
			store, _ := sk.open(t, clock.Real())
			events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
			require.NoError(t, events.Start(context.Background()))
			defer events.Stop(context.Background())
			enq, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
			require.NoError(t, err)
			id := enq[0].Run.ID

			sub := events.Subscribe(ctx, id, 0, 0, time.Hour) // woken by flushes only
			release := make(chan struct{})
			w, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Queues: map[string]int{"q": 1}, Logger: quiet})
			require.NoError(t, err)
			w.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
				for i := 1; i <= 50; i++ {
					if err := r.Emit(ctx, "tick", []byte(strconv.Itoa(i))); err != nil {
						return err
					}
					if i%10 == 0 {
						if err := r.Step(ctx); err != nil {
							return err
						}
					}
				}
				<-release
				return nil
			})
			require.NoError(t, w.Start(ctx))
			var fence int64
			for i := 1; i <= 50; i++ {
				ev := <-sub
				require.NotNil(t, ev, "subscription closed early")
				require.Equal(t, int64(i), ev.Seq)
				require.Equal(t, strconv.Itoa(i), string(ev.Payload))
				fence = ev.Fence
			}
			close(release)
			require.NoError(t, w.Stop(ctx))

			sctx, scancel := context.WithCancel(ctx)
			resumed := events.Subscribe(sctx, id, fence, 37, time.Millisecond)
			for i := 38; i <= 50; i++ {
				ev := <-resumed
				require.Equal(t, fmt.Sprint(i), string(ev.Payload))
			}
			scancel()
			for range resumed { // drained and closed, nothing repeated
				t.Fatal("an event past the end")
			}
		})
	}
}
