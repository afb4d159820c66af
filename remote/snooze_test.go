package remote_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/remote"
	"github.com/leasehold/leasehold/runs"
)

// TestSnoozeRunsTheSameInProcessAndRemotely: a handler that returns
// leasehold.Snooze once and then completes ends completed on its only
// attempt under both workers (a snooze written as a fail would have spent
// it: MaxAttempts is 1), with one snooze counted; a handler that always
// snoozes is stopped at MaxSnoozes the same way by both — its attempt
// failed, the limit as the reason. On each store.
func TestSnoozeRunsTheSameInProcessAndRemotely(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		s := serve(t, open, lease.Timing{}, false)
		ctx := context.Background()
		for _, kind := range []string{"in-process", "remote"} {
			var mu sync.Mutex
			calls := map[int64]int{}
			handler := func(ctx context.Context, r *leasehold.RunHandle) error {
				mu.Lock()
				calls[r.ID]++
				n := calls[r.ID]
				mu.Unlock()
				if err := r.Emit(ctx, "call", []byte(`{}`)); err != nil {
					return err
				}
				if string(r.Payload) == `{"always":true}` || n == 1 {
					return leasehold.Snooze(0)
				}
				return nil
			}
			var w aWorker
			var err error
			switch kind {
			case "in-process":
				w, err = s.c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{kind: 2}, MaxSnoozes: 1, ClockCheck: -1, Logger: slog.New(slog.DiscardHandler)})
			case "remote":
				w, err = remote.NewWorker(remote.WorkerConfig{Client: s.client(), Queues: map[string]int{kind: 2}, MaxSnoozes: 1, Wait: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
			}
			require.NoError(t, err)
			w.Handle(kind, handler)
			once, err := s.c.Enqueue(ctx, leasehold.Enqueue{Queue: kind, Payload: []byte(`{"always":false}`), MaxAttempts: 1})
			require.NoError(t, err)
			always, err := s.c.Enqueue(ctx, leasehold.Enqueue{Queue: kind, Payload: []byte(`{"always":true}`), MaxAttempts: 1})
			require.NoError(t, err)
			require.NoError(t, w.Start(ctx))
			for _, id := range []int64{once[0].Run.ID, always[0].Run.ID} {
				// Two calls each: the second claim happened, so the
				// snooze gave the run back.
				wait, cancel := context.WithTimeout(ctx, 60*time.Second)
				sub := s.c.Subscribe(wait, id, leasehold.SubscribeOptions{})
				for range 2 {
					_, ok := <-sub
					require.True(t, ok, "%s: run %d was not called twice", kind, id)
				}
				cancel()
			}
			stop, cancel := context.WithTimeout(ctx, 30*time.Second)
			require.NoError(t, w.Stop(stop))
			cancel()

			r, err := s.c.Run(ctx, once[0].Run.ID)
			require.NoError(t, err)
			require.Equal(t, runs.StateCompleted, r.State, "%s: %s", kind, r.Reason)
			require.Equal(t, 1, r.Attempt, "%s: the snooze gave its attempt back", kind)
			require.Equal(t, 1, r.Snoozes, kind)

			r, err = s.c.Run(ctx, always[0].Run.ID)
			require.NoError(t, err)
			require.Equal(t, runs.StateFailed, r.State, kind)
			require.Equal(t, 1, r.Snoozes, "%s: the second snooze was refused", kind)
			require.Contains(t, r.Reason, "limit", kind)
		}
	})
}
