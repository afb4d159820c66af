package scheduler

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// WorkOne claims one due run of queue and works it in the calling
// goroutine — the same path a fetch loop's run takes (keeper entry,
// heartbeat, handler, fenced final write) — and returns the run as the
// store has it afterwards, or nil when no run of queue was due. The
// worker must be started, with Manual set so that no fetch loop claims
// beside it.
func (w *Worker) WorkOne(ctx context.Context, queue string) (*driver.Run, error) {
	if !w.cfg.Manual {
		return nil, &journal.InputError{Field: "manual", Problem: "WorkOne needs a worker configured Manual (its fetch loops would claim beside it)"}
	}
	if _, ok := w.cfg.Queues[queue]; !ok {
		return nil, &journal.InputError{Field: "queue", Problem: fmt.Sprintf("queue %q is not one of the worker's", queue)}
	}
	select {
	case <-w.life.Started():
	default:
		return nil, fmt.Errorf("WorkOne: the worker is not started")
	}
	sent := w.cfg.Clock.Now()
	claimed, err := w.store.RunClaim(ctx, &driver.RunClaimParams{Queue: queue, Owner: w.cfg.Owner, Limit: 1, Lease: w.cfg.Timing.Lease})
	if err != nil || len(claimed) == 0 {
		return nil, err
	}
	w.running.Add(1)
	func() {
		defer w.running.Done()
		w.work(claimed[0], w.newBeatGroup(sent, 1), 0)
	}()
	return w.store.RunGet(ctx, &driver.RunGetParams{ID: claimed[0].ID})
}
