package clock

import (
	"container/heap"
	"time"
)

// notArmed is a fakeTimer's index while it is not in the fake's heap.
const notArmed = -1

// fakeTimer is one timer, ticker or AfterFunc on a Fake. Its mutable fields
// are guarded by the fake's mutex.
type fakeTimer struct {
	f      *Fake
	seq    uint64         // creation order; breaks ties between equal due times
	when   time.Time      // due time while armed
	period time.Duration  // > 0 for a ticker
	ch     chan time.Time // buffer 1; nil for AfterFunc
	fn     func()         // AfterFunc's callback; nil otherwise
	index  int            // position in f.due, or notArmed
}

// NewTimer returns a timer due d from now; d <= 0 is due at once and fires
// on the next Advance or forward Set.
func (f *Fake) NewTimer(d time.Duration) (Timer, <-chan time.Time) {
	t := f.start(d, 0, make(chan time.Time, 1), nil)
	return t, t.ch
}

// NewTicker returns a ticker first due d from now. It panics if d <= 0.
func (f *Fake) NewTicker(d time.Duration) (Ticker, <-chan time.Time) {
	if d <= 0 {
		panic("clock: non-positive interval for Fake.NewTicker")
	}
	t := f.start(d, d, make(chan time.Time, 1), nil)
	return (*fakeTicker)(t), t.ch
}

// AfterFunc arranges for fn to run inside the Advance or Set that passes d
// from now; d <= 0 runs it at the next one, never inside AfterFunc.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	if fn == nil {
		panic("clock: Fake.AfterFunc with nil func")
	}
	return f.start(d, 0, nil, fn)
}

func (f *Fake) start(d, period time.Duration, ch chan time.Time, fn func()) *fakeTimer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{f: f, seq: f.nextSeq, period: period, ch: ch, fn: fn, index: notArmed}
	f.nextSeq++
	t.armLocked(d)
	return t
}

// armLocked puts the timer on the heap due d from now. Like package time, a
// negative d is treated as zero, so it orders among other due-now timers by
// creation rather than jumping ahead of them.
func (t *fakeTimer) armLocked(d time.Duration) {
	d = max(d, 0)
	t.when = t.f.now.Add(d)
	heap.Push(&t.f.due, t)
	t.f.wakeWaitersLocked()
}

// stopLocked disarms the timer and empties its channel, reporting whether
// it stopped anything. Emptying the channel is what package time does since
// Go 1.23: a value delivered but not yet received counts as not yet fired,
// so the caller never receives a stale time after Stop or Reset.
func (t *fakeTimer) stopLocked() bool {
	active := t.index != notArmed
	if active {
		heap.Remove(&t.f.due, t.index)
	}
	if t.ch != nil {
		select {
		case <-t.ch:
			active = true
		default:
		}
	}
	return active
}

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.stopLocked()
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	active := t.stopLocked()
	t.armLocked(d)
	return active
}

// fakeTicker is the Ticker view of a periodic fakeTimer; it exists only
// because Ticker.Stop returns nothing.
type fakeTicker fakeTimer

func (tk *fakeTicker) Stop() {
	t := (*fakeTimer)(tk)
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.stopLocked()
}

func (tk *fakeTicker) Reset(d time.Duration) {
	if d <= 0 {
		panic("clock: non-positive interval for Ticker.Reset")
	}
	t := (*fakeTimer)(tk)
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.stopLocked()
	t.period = d
	t.armLocked(d)
}
