package rt

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/leasehold/leasehold/clock"
)

// Real returns the runtime of a process: goroutines, channels, and c's
// timers (nil: the real clock). Its WithTimeout is context.WithTimeout
// (the machine's clock): a deadline bounds real calls on real sockets,
// and a fake clock must not be able to hold it open.
func Real(c clock.Clock) Runtime {
	if c == nil {
		c = clock.Real()
	}
	return realRT{c: c}
}

type realRT struct{ c clock.Clock }

func (realRT) Go(_ string, fn func()) { go fn() }

func (realRT) NewEvent() Event { return &chanEvent{ch: make(chan struct{})} }

func (r realRT) Wait(ctx context.Context, ev Event, d time.Duration) Woke {
	var fired <-chan struct{}
	if ev != nil {
		fired = ev.(*chanEvent).ch
	}
	select { // already fired or done: no timer made
	case <-fired:
		return Fired
	case <-ctx.Done():
		return Done
	default:
	}
	if d == 0 { // due now: no timer (a fake clock's would wait for Advance)
		return Timeout
	}
	var timeout <-chan time.Time
	if d >= 0 {
		t, c := r.c.NewTimer(d)
		defer t.Stop()
		timeout = c
	}
	select {
	case <-fired:
		return Fired
	case <-ctx.Done():
		return Done
	case <-timeout:
		return Timeout
	}
}

func (realRT) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

func (realRT) AfterFunc(ctx context.Context, f func()) func() bool { return context.AfterFunc(ctx, f) }

func (realRT) Yield() { runtime.Gosched() }

func (r realRT) After(d time.Duration, f func()) Stopper { return r.c.AfterFunc(d, f) }

// chanEvent is the real runtime's Event: a channel closed once.
type chanEvent struct {
	once sync.Once
	ch   chan struct{}
}

func (e *chanEvent) Fire() { e.once.Do(func() { close(e.ch) }) }

func (e *chanEvent) Fired() bool {
	select {
	case <-e.ch:
		return true
	default:
		return false
	}
}
