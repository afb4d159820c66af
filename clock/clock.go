package clock

import "time"

// Clock tells the time and makes timers. Implementations must be safe for
// concurrent use.
type Clock interface {
	// Now returns the current time. The real clock's reading carries the
	// monotonic clock, so differences between two readings are immune to
	// wall-clock steps; lease runway depends on that.
	Now() time.Time

	// Since returns the time elapsed since t, that is Now().Sub(t).
	Since(t time.Time) time.Duration

	// NewTimer returns a timer that sends the time on the returned channel
	// once, after at least d. A d <= 0 makes the timer due at once.
	NewTimer(d time.Duration) (Timer, <-chan time.Time)

	// NewTicker returns a ticker that sends the time on the returned channel
	// every d. The channel holds one tick; a slow reader misses ticks rather
	// than queueing them. NewTicker panics if d <= 0, as time.NewTicker does.
	NewTicker(d time.Duration) (Ticker, <-chan time.Time)

	// AfterFunc calls f once, after at least d. The returned Timer's Stop
	// cancels the call if it has not started.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a one-shot timer, satisfied by *time.Timer.
type Timer interface {
	// Stop prevents the timer from firing. It returns true if the call
	// stopped the timer, false if it had already fired (and, for a channel
	// timer, its value was received) or had been stopped.
	Stop() bool

	// Reset re-arms the timer to fire after d, returning what Stop would
	// have returned.
	Reset(d time.Duration) bool
}

// Ticker is a periodic timer, satisfied by *time.Ticker.
type Ticker interface {
	// Stop turns the ticker off; no tick is received after it returns.
	Stop()

	// Reset stops the ticker and restarts it with period d: the next tick
	// comes d from now. It panics if d <= 0, as time.Ticker.Reset does.
	Reset(d time.Duration)
}
