package leaseholdtest

import (
	"context"
	"log/slog"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/lease"
)

// WorkOpts configures Work. The zero value works under the real clock.
type WorkOpts struct {
	// Clock is the worker's clock (its heartbeats, the gate's runway):
	// a *clock.Fake keeps them still, so a handler's Effect always finds
	// the lease's full runway and nothing renews behind the test's back.
	// (The store's own clock is the driver's: sqlite.Config.Clock.)
	Clock clock.Clock
	// Timing is the run lease timing; zero fields take the defaults.
	Timing lease.Timing
	// Owner names the worker in the run's row; defaults to
	// "leaseholdtest".
	Owner string
	// Logger defaults to a discarding one.
	Logger *slog.Logger
}

// WorkResult is what one Work did.
type WorkResult struct {
	// Run is the run as the store has it after the handler's outcome was
	// written (completed, failed, available again for a retry or a
	// snooze, blocked).
	Run *leasehold.Run
	// Err is what the handler returned (nil: it completed the run).
	Err error
}

// Work claims the next due run of queue and works it synchronously with
// h, through the worker's own path (claim under a lease, heartbeat in
// sync mode, the handler, the fenced final write), then stops the worker.
// It fails t if no run of queue is due or the worker cannot start.
func Work(ctx context.Context, t T, c *leasehold.Client, queue string, h leasehold.Handler, opts *WorkOpts) *WorkResult {
	t.Helper()
	if opts == nil {
		opts = &WorkOpts{}
	}
	owner, log := opts.Owner, opts.Logger
	if owner == "" {
		owner = "leaseholdtest"
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w, err := c.NewWorker(leasehold.WorkerConfig{Owner: owner, Queues: map[string]int{queue: 1}, Timing: opts.Timing,
		Mode: leasehold.ModeSync, ClockCheck: -1, Manual: true, Clock: opts.Clock, Logger: log})
	if err != nil {
		t.Errorf("leaseholdtest: new worker: %v", err)
		t.FailNow()
	}
	res := &WorkResult{}
	w.Handle(queue, func(ctx context.Context, r *leasehold.RunHandle) error {
		res.Err = h(ctx, r)
		return res.Err
	})
	if err := w.Start(ctx); err != nil {
		t.Errorf("leaseholdtest: starting the worker: %v", err)
		t.FailNow()
	}
	defer func() { _ = w.Stop(context.WithoutCancel(ctx)) }()
	run, err := w.WorkOne(ctx, queue)
	if err != nil {
		t.Errorf("leaseholdtest: working a run of %q: %v", queue, err)
		t.FailNow()
	}
	if run == nil {
		t.Errorf("leaseholdtest: no run of queue %q is due", queue)
		t.FailNow()
	}
	res.Run = run
	return res
}
