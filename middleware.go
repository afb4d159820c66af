package leasehold

import (
	"context"

	"github.com/leasehold/leasehold/internal/scheduler"
)

// Middleware wraps every handler of a worker, as River's worker
// middleware does: it is called with the run and next, the rest of the
// chain down to the handler, and returns the outcome the worker records —
// usually what next returned. Logging, metrics and tracing hooks go here
// (start a span, call next, record the error); a middleware may also
// decide an outcome itself (return Snooze without calling next). A panic
// in a middleware is a panicking handler: the attempt fails with its
// stack, the worker goes on.
//
//	logging := func(ctx context.Context, r *leasehold.RunHandle, next func(context.Context) error) error {
//		start := time.Now()
//		err := next(ctx)
//		slog.Info("run", "id", r.ID, "queue", r.Queue, "attempt", r.Attempt, "took", time.Since(start), "err", err)
//		return err
//	}
type Middleware func(ctx context.Context, r *RunHandle, next func(ctx context.Context) error) error

// chain wraps h in mws, the first outermost.
func chain(mws []Middleware, h Handler) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		mw, inner := mws[i], h
		h = func(ctx context.Context, r *RunHandle) error {
			return mw(ctx, r, func(ctx context.Context) error { return inner(ctx, r) })
		}
	}
	return h
}

// TimeoutError is a handler that ran past its queue's timeout
// (WorkerConfig.Timeouts) and returned an error: the attempt fails with
// it as the reason. It matches context.DeadlineExceeded and the handler's
// own error.
type TimeoutError = scheduler.TimeoutError
