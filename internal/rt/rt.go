package rt

import (
	"context"
	"time"
)

// Runtime starts goroutines and waits for them to be woken.
// Implementations are safe for concurrent use.
type Runtime interface {
	// Go runs fn on a new goroutine. name labels it in traces.
	Go(name string, fn func())
	// NewEvent returns a new, unfired event.
	NewEvent() Event
	// Wait blocks until ev has fired (nil: no event), ctx is done, or d
	// has passed on the runtime's clock (d < 0: no timer), and says which
	// it saw first; an event already fired or a context already done
	// returns at once.
	Wait(ctx context.Context, ev Event, d time.Duration) Woke
	// WithTimeout is context.WithTimeout with the deadline d from now on
	// the runtime's clock.
	WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc)
	// AfterFunc is context.AfterFunc: f runs once after ctx is done,
	// unless stop was called first.
	AfterFunc(ctx context.Context, f func()) (stop func() bool)
	// Yield lets the other goroutines that are ready run before the
	// caller goes on (runtime.Gosched).
	Yield()
	// After calls f once, d from now on the runtime's clock, unless the
	// returned Stopper's Stop is called first. f must not block: the
	// real runtime runs it on a goroutine of its own, the simulator on
	// its loop (so f may start goroutines with Go, not wait).
	After(d time.Duration, f func()) Stopper
}

// Stopper stops a call After scheduled.
type Stopper interface {
	// Stop prevents the call if it has not started, and reports whether
	// it did.
	Stop() bool
}

// Event is a one-shot broadcast: once fired it stays fired, and every
// Wait on it returns (a closed channel).
type Event interface {
	// Fire fires the event; firing it again does nothing.
	Fire()
	// Fired reports whether the event has fired.
	Fired() bool
}

// Woke says what ended a Wait.
type Woke int

const (
	// Fired: the event fired.
	Fired Woke = iota + 1
	// Done: the context is done.
	Done
	// Timeout: the duration passed.
	Timeout
)

func (w Woke) String() string {
	switch w {
	case Fired:
		return "fired"
	case Done:
		return "done"
	case Timeout:
		return "timeout"
	}
	return "unknown"
}

// Or returns r, or Real(nil) when r is nil: a zero config means the real
// runtime.
func Or(r Runtime) Runtime {
	if r == nil {
		return Real(nil)
	}
	return r
}
