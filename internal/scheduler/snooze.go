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

// snoozeError asks the worker to snooze the run: back to available after
// delay, its attempt not consumed. A delay the rule refuses is carried as
// invalid, so the request itself matches ErrInvalid and the worker fails
// the attempt with the refusal instead of dropping it.
type snoozeError struct {
	delay   time.Duration
	invalid error
}

func (e *snoozeError) Error() string {
	if e.invalid != nil {
		return fmt.Sprintf("snooze refused: %v", e.invalid)
	}
	return fmt.Sprintf("snooze for %s", e.delay)
}

// Unwrap returns the refusal of an invalid delay (ErrInvalid), else nil.
func (e *snoozeError) Unwrap() error { return e.invalid }

// Snooze is returned by a handler to put its run back to available after
// delay without consuming an attempt (0 <= delay <= runs.MaxDelay); the
// lease is released. A run snoozes at most WorkerConfig.MaxSnoozes times
// over its life; past that, or with a delay out of range, the attempt
// fails instead, with the refusal as the reason.
func Snooze(delay time.Duration) error {
	return &snoozeError{delay: delay, invalid: runs.ValidateSnooze(delay)}
}

// snooze writes a handler's snooze, fenced: the run goes back to available
// if it is still held under r.Fence and under the bound. A refusal for the
// bound or the delay changed nothing and the run is still held, so the
// attempt fails instead (with backoff), under the same fence: a handler
// that snoozes forever is stopped loudly, never silently.
func (w *Worker) snooze(ctx context.Context, r *Run, se *snoozeError) error {
	err := se.invalid
	if err == nil {
		_, err = w.store.RunSnooze(ctx, &driver.RunSnoozeParams{ID: r.ID, Fence: r.Fence, Delay: se.delay, MaxSnoozes: w.cfg.MaxSnoozes})
		var lim *driver.SnoozeLimitError
		if !errors.As(err, &lim) {
			return err // done, fenced out, or failed: as any final write
		}
	} else {
		err = se
	}
	_, ferr := w.store.RunFail(ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, Reason: journal.SafeReason(err.Error()),
		RetryAfter: w.cfg.Backoff.Delay(r.Attempt, w.cfg.Rand())})
	return ferr
}

// AsSnooze reports whether a handler's error asks to snooze its run: the
// delay, and the refusal of a delay out of range (nil when valid).
func AsSnooze(err error) (delay time.Duration, invalid error, ok bool) {
	var se *snoozeError
	if errors.As(err, &se) {
		return se.delay, se.invalid, true
	}
	return 0, nil, false
}
