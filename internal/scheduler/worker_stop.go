package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// validateTimeouts checks per-queue handler timeouts.
func validateTimeouts(ts map[string]time.Duration) error {
	for q, d := range ts {
		if d < 0 || d > runs.MaxDelay {
			return &journal.InputError{Field: "timeouts", Problem: fmt.Sprintf("queue %q: %s is outside 0 (none)..%s", q, d, runs.MaxDelay)}
		}
	}
	return nil
}

// TimeoutError is a handler that ran past its queue's timeout and
// returned an error: the attempt fails with it as the reason.
type TimeoutError struct {
	Queue   string
	Timeout time.Duration
	Err     error // what the handler returned
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("handler of queue %q timed out after %s: %v", e.Queue, e.Timeout, e.Err)
}

// Unwrap returns context.DeadlineExceeded and the handler's error.
func (e *TimeoutError) Unwrap() []error { return []error{context.DeadlineExceeded, e.Err} }

// callTimed runs the handler, bounded by its queue's timeout if it has
// one (on the worker's runtime, so a fake clock drives it).
func (w *Worker) callTimed(ctx context.Context, r *Run) error {
	h := w.handlers[r.Queue]
	d := w.cfg.Timeouts[r.Queue]
	if d <= 0 {
		return h(ctx, r)
	}
	tctx, cancel := w.rt.WithTimeout(ctx, d)
	defer cancel()
	err := h(tctx, r)
	if err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return &TimeoutError{Queue: r.Queue, Timeout: d, Err: err}
	}
	return err
}

// release is the second stage of Stop for one run: its handler was
// cancelled past the grace period and gave up, so the run goes back to
// available at once with a fenced write (attempt given back, place in the
// queue kept) — another worker claims it on its next poll, not after the
// lease expires. Fenced out (reclaimed or cancelled meanwhile), it
// changes nothing.
func (w *Worker) release(ctx context.Context, r *Run, herr error) error {
	reason := journal.SafeReason(fmt.Sprintf("released at worker stop (owner %s): %v", w.cfg.Owner, herr))
	_, err := w.store.RunRelease(ctx, &driver.RunReleaseParams{ID: r.ID, Fence: r.Fence, Reason: reason})
	if err == nil {
		w.cfg.Logger.Info("run released at stop", "run", r.ID, "fence", r.Fence)
	}
	return err
}
