package scheduler_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/runs"
)

// completionBeforeDrain holds the first drain that carries a run until
// that run's completion has committed: the interleaving a loaded box
// makes (the drain waits on the same rows, on SQLite the same write lock)
// in which the drain's statement finds the run already completed.
type completionBeforeDrain struct {
	scheduler.Store
	drainIn   chan struct{} // closed when a drain carrying a run arrives
	completed chan struct{} // closed when a completion has committed
	drainOut  chan int      // the held drain's lost count, once answered
	answered  chan struct{} // closed when the held drain was answered
	keeper    *keeper.Keeper
	inOnce    sync.Once
	doneOnce  sync.Once
}

func (s *completionBeforeDrain) RunRenewMany(ctx context.Context, p *driver.RunRenewManyParams) (*driver.RunRenewManyResult, error) {
	first := false
	if len(p.Runs) > 0 {
		s.inOnce.Do(func() { close(s.drainIn); first = true })
	}
	if !first {
		return s.Store.RunRenewMany(ctx, p)
	}
	<-s.completed // not the context: the drain must reach the store after the completion
	res, err := s.Store.RunRenewMany(ctx, p)
	if err != nil {
		s.drainOut <- -1
	} else {
		s.drainOut <- len(res.Lost)
	}
	close(s.answered)
	return res, err
}

func (s *completionBeforeDrain) RunCompleteMany(ctx context.Context, p *driver.RunCompleteManyParams) (*driver.RunCompleteManyResult, error) {
	res, err := s.Store.RunCompleteMany(ctx, p)
	s.doneOnce.Do(func() {
		close(s.completed)
		// The worker learns of its completion only after the keeper has
		// handled the drain's answer: DrainOnce holds the keeper's drain
		// lock until the in-flight drain is handled (this one finds
		// nothing dirty and sends nothing).
		<-s.answered
		_ = s.keeper.DrainOnce(ctx)
	})
	return res, err
}

// TestADrainMeetingItsRunsCompletionCountsNoLostLease: a run completes
// while a drain that carries its renewal is on its way; the drain finds
// the run no longer running. That is the completion, not a lost lease:
// the keeper counts none (it counted one per such race, and logged
// "lease lost", before keeper.Entry.Finishing), and the run completed.
func TestADrainMeetingItsRunsCompletionCountsNoLostLease(t *testing.T) {
	t.Parallel()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, _ := sk.open(t, clock.Real())
			held := &completionBeforeDrain{Store: store, drainIn: make(chan struct{}), completed: make(chan struct{}), drainOut: make(chan int, 1),
				answered: make(chan struct{})}
			_, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
			require.NoError(t, err)
			quiet := slog.New(slog.DiscardHandler)
			events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
			require.NoError(t, events.Start(ctx))
			defer events.Stop(ctx)
			w, err := scheduler.NewWorker(held, events, scheduler.WorkerConfig{Queues: map[string]int{"q": 1},
				Timing: fastTiming, Logger: quiet})
			require.NoError(t, err)
			held.keeper = w.Keeper()
			w.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
				<-held.drainIn // a drain carrying this run's renewal is on its way
				return nil
			})
			require.NoError(t, w.Start(ctx))
			require.Equal(t, 1, <-held.drainOut, "the drain found the run no longer running")
			require.NoError(t, w.Stop(ctx))
			r, err := store.RunGet(ctx, &driver.RunGetParams{ID: 1})
			require.NoError(t, err)
			require.Equal(t, runs.StateCompleted, r.State)
			st := w.Keeper().Stats()
			require.Zero(t, st.Lost, "the drain met the run's own completion, not a lost lease")
		})
	}
}
