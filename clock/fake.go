package clock

import (
	"container/heap"
	"sync"
	"time"
)

var _ Clock = (*Fake)(nil)

// Fake is a Clock whose time moves only when told to, by Advance or Set.
// Timers, tickers and AfterFunc callbacks fire from inside those calls, on
// the calling goroutine, so a test decides exactly when a background loop
// wakes. It is safe for concurrent use. The zero value is a clock stopped at
// the zero time; NewFake starts it elsewhere.
//
// Due times are absolute points on the fake's timeline. A timer made with
// d <= 0 is due at once: like package time, it fires at the next
// opportunity, which for a Fake is the next Advance (Advance(0) included) or
// forward Set. That holds for AfterFunc too: the callback never runs inside
// AfterFunc itself, so a caller holding a lock cannot deadlock on it.
type Fake struct {
	// mu guards every field below and every fakeTimer's mutable fields. It is
	// never held while an AfterFunc callback runs, so callbacks may use the
	// clock freely.
	mu      sync.Mutex
	now     time.Time
	nextSeq uint64    // creation counter; orders timers that fall due together
	due     timerHeap // armed timers, earliest (due time, creation) first
	waiters []waiter  // BlockUntil callers not yet satisfied
}

// NewFake returns a Fake whose time starts at start.
func NewFake(start time.Time) *Fake {
	return &Fake{now: start}
}

// Now returns the fake's current time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Since returns Now().Sub(t).
func (f *Fake) Since(t time.Time) time.Duration {
	return f.Now().Sub(t)
}

// Advance moves time forward by d and fires, in due-time order (ties in
// creation order), every timer, ticker and AfterFunc that falls due on the
// way. While each one fires, Now reports its due time, so a callback that
// re-arms itself stays on its own schedule. When Advance returns, nothing
// armed is due at or before the new time.
//
// A ticker that fell due several times delivers once (its channel holds one
// tick, as time.Ticker's does) and its next due time stays on its period
// grid. AfterFunc callbacks run synchronously, without the fake's lock held.
// Advance panics if d < 0; use Set to step time backwards.
func (f *Fake) Advance(d time.Duration) {
	if d < 0 {
		panic("clock: Fake.Advance with negative duration " + d.String())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fireUntilLocked(f.now.Add(d))
}

// Set moves time to t. Forward, it behaves as Advance(t.Sub(Now())). Back,
// it fires nothing and armed timers keep their absolute due times, so they
// fire later than planned: that is the point of a clock-step test.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if t.Before(f.now) {
		f.now = t
		return
	}
	f.fireUntilLocked(t)
}

// PendingTimers reports how many timers, tickers and AfterFuncs are armed.
func (f *Fake) PendingTimers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.due.Len()
}

// fireUntilLocked fires everything due at or before target, then leaves the
// time at target (or later, if a concurrent Advance got further). It is
// called with f.mu held and returns with it held, but releases it around
// each AfterFunc callback.
func (f *Fake) fireUntilLocked(target time.Time) {
	for f.due.Len() > 0 {
		t := f.due[0]
		if t.when.After(target) {
			break
		}
		// Time never moves backwards here, even if another goroutine's
		// Advance got past this timer while a callback ran unlocked.
		if t.when.After(f.now) {
			f.now = t.when
		}

		if t.fn != nil {
			heap.Pop(&f.due)
			f.runUnlocked(t.fn)
			continue
		}

		// Never block: like package time, a full channel drops the value.
		select {
		case t.ch <- t.when:
		default:
		}
		if t.period == 0 {
			heap.Pop(&f.due)
			continue
		}
		t.when = nextTick(t.when, t.period, target)
		heap.Fix(&f.due, t.index)
	}
	if target.After(f.now) {
		f.now = target
	}
}

// runUnlocked runs an AfterFunc callback without the lock, so it may call
// back into the fake. The deferred re-lock keeps the caller's deferred
// Unlock balanced if fn panics, so the panic reaches the test intact instead
// of turning into an unrecoverable "unlock of unlocked mutex".
func (f *Fake) runUnlocked(fn func()) {
	f.mu.Unlock()
	defer f.mu.Lock()
	fn()
}

// nextTick returns the ticker's next due time after firing at last: the
// first point on its grid (last + k*period) after target. Ticks skipped on
// the way are the ones a real ticker would drop into its full channel; the
// grid is kept so a ticker observed over many Advances does not drift.
func nextTick(last time.Time, period time.Duration, target time.Time) time.Time {
	next := last.Add(period)
	if next.After(target) {
		return next
	}
	// target.Sub saturates, so skipped*period cannot overflow; two Adds
	// keep the final +period from overflowing either.
	skipped := target.Sub(last) / period
	return last.Add(skipped * period).Add(period)
}
