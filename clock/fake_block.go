package clock

// waiter is a BlockUntil call waiting for at least n armed timers.
type waiter struct {
	n     int
	ready chan struct{}
}

// BlockUntil blocks until at least n timers, tickers or AfterFuncs are armed
// on the fake. A test calls it to know that a background goroutine has
// reached its wait before advancing time past it; without it, the Advance
// could run first and the goroutine would then wait forever. It waits on a
// signal from the arming code, never by polling or sleeping.
func (f *Fake) BlockUntil(n int) {
	f.mu.Lock()
	if f.due.Len() >= n {
		f.mu.Unlock()
		return
	}
	w := waiter{n: n, ready: make(chan struct{})}
	f.waiters = append(f.waiters, w)
	f.mu.Unlock()
	<-w.ready
}

// wakeWaitersLocked releases every BlockUntil call now satisfied. The
// number of armed timers only grows when one is armed, so this runs there.
func (f *Fake) wakeWaitersLocked() {
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if f.due.Len() >= w.n {
			close(w.ready)
			continue
		}
		kept = append(kept, w)
	}
	clear(f.waiters[len(kept):])
	f.waiters = kept
}
