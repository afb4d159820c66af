package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/internal/rt"
)

// simRT is rt.Runtime on the loop, for one process generation (or, with
// p nil, for the store side: the reclaimer and the expiry sweep): the
// shipped worker, completer, event committer, batcher and keeper run on it
// unchanged. A goroutine is a thread of the generation; a wait parks the
// calling thread until the loop resumes it — when the event fires, when
// the context is seen done (the loop looks after every step, see
// loop.watch) or at the virtual instant its timer is due — so exactly one
// thread runs at a time and the schedule is the seed's alone. A dead
// generation starts nothing and waits for nothing: its threads unwind at
// their next Go, Wait or store call (thread.check).
type simRT struct {
	l   *loop
	p   *proc
	gen int
}

var _ rt.Runtime = (*simRT)(nil)

// alive reports whether r's generation still runs (the store side, p
// nil, runs until the simulation ends).
func (r *simRT) alive() bool { return !r.l.over && (r.p == nil || r.p.up && r.p.gen == r.gen) }

// thread returns the calling thread, unwinding it if its process died.
func (r *simRT) thread(what string) *thread {
	t := r.l.cur
	if t == nil {
		panic(fmt.Sprintf("sim: %s outside a thread", what))
	}
	t.check()
	return t
}

func (r *simRT) Go(name string, fn func()) {
	if t := r.l.cur; t != nil {
		t.check()
	}
	if !r.alive() {
		return
	}
	owner := "store"
	if r.p != nil {
		owner = r.p.owner
	}
	t := r.l.spawn(r.p, owner+" "+name, func(*thread) { fn() })
	if r.p == nil {
		r.l.storeSide = append(r.l.storeSide, t)
	}
}

func (r *simRT) NewEvent() rt.Event { return &simEvent{l: r.l} }

func (r *simRT) Wait(ctx context.Context, ev rt.Event, d time.Duration) rt.Woke {
	t := r.thread("wait")
	e, _ := ev.(*simEvent)
	if ev != nil && e == nil {
		panic("sim: an event of another runtime")
	}
	switch {
	case e != nil && e.fired:
		return rt.Fired
	case ctx.Err() != nil:
		return rt.Done
	}
	l := r.l
	seq := t.prepare()
	wake := func() { l.resume(t, seq) }
	if e != nil {
		e.waiters = append(e.waiters, wake)
	}
	var w *watcher
	if ctx.Done() != nil {
		w = l.watch(ctx, func() { l.at(l.now, wake) })
	}
	if d >= 0 {
		l.at(l.now+d, wake)
	}
	t.park()
	if w != nil {
		w.off = true
	}
	switch {
	case e != nil && e.fired:
		return rt.Fired
	case ctx.Err() != nil:
		return rt.Done
	}
	return rt.Timeout
}

// deadlineKey carries a simulated deadline (virtual time) in a context,
// so a store call made under it times out exactly then.
type deadlineKey struct{}

func (r *simRT) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	l := r.l
	at := l.now + d
	if prev, ok := ctx.Value(deadlineKey{}).(time.Duration); ok && prev < at {
		at = prev
	}
	cctx, cancel := context.WithCancelCause(context.WithValue(ctx, deadlineKey{}, at))
	l.at(at, func() { cancel(context.DeadlineExceeded) })
	return cctx, func() { cancel(context.Canceled) }
}

func (r *simRT) AfterFunc(ctx context.Context, f func()) func() bool {
	w := r.l.watch(ctx, f)
	return func() bool {
		if w.off {
			return false
		}
		w.off = true
		return true
	}
}

func (r *simRT) Yield() { r.thread("yield").sleep(0) }

// After runs f on the loop at its virtual instant, unless stopped first
// or the generation died.
func (r *simRT) After(d time.Duration, f func()) rt.Stopper {
	a := &simAfter{}
	r.l.at(r.l.now+d, func() {
		if a.done || !r.alive() {
			return
		}
		a.done = true
		f()
	})
	return a
}

// simAfter is simRT's Stopper: done once the call ran or was stopped.
type simAfter struct{ done bool }

func (a *simAfter) Stop() bool {
	if a.done {
		return false
	}
	a.done = true
	return true
}

// simEvent is simRT's Event: fired once, resuming every thread parked on
// it at the instant it fires, in the order they began to wait.
type simEvent struct {
	l       *loop
	fired   bool
	waiters []func()
}

func (e *simEvent) Fire() {
	if e.fired {
		return
	}
	e.fired = true
	for _, wake := range e.waiters {
		e.l.at(e.l.now, wake)
	}
	e.waiters = nil
}

func (e *simEvent) Fired() bool { return e.fired }

// watcher runs fn on the loop once ctx is done, unless turned off first.
type watcher struct {
	ctx context.Context
	fn  func()
	off bool
}

// watch registers fn to run once ctx is done. A context ends when a thread
// (or the loop) cancels it, which the loop cannot see happen: it looks
// after every step, in the order the watches were made, so the schedule
// stays the seed's.
func (l *loop) watch(ctx context.Context, fn func()) *watcher {
	w := &watcher{ctx: ctx, fn: fn}
	l.watchers = append(l.watchers, w)
	return w
}

// scanWatchers runs the watches whose context is done, until a pass finds
// none (a watch may cancel further contexts).
func (l *loop) scanWatchers() {
	for {
		ws := l.watchers
		l.watchers = nil
		kept := ws[:0]
		fired := false
		var run []*watcher
		for _, w := range ws {
			switch {
			case w.off:
			case w.ctx.Err() != nil:
				w.off = true
				run = append(run, w)
			default:
				kept = append(kept, w)
			}
		}
		l.watchers = append(kept, l.watchers...)
		for _, w := range run {
			w.fn()
			fired = true
		}
		if !fired {
			return
		}
	}
}
