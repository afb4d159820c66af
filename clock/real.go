package clock

import "time"

// The real clock hands out package time's own values: they already satisfy
// Timer and Ticker, so nothing is wrapped and nothing allocates beyond what
// package time does.
var (
	_ Timer  = (*time.Timer)(nil)
	_ Ticker = (*time.Ticker)(nil)
	_ Clock  = realClock{}
)

// realClock is the Clock backed by package time.
type realClock struct{}

// Real returns the Clock backed by package time. Its Now keeps the monotonic
// reading that time.Now attaches.
func Real() Clock { return realClock{} }

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Since(t time.Time) time.Duration { return time.Since(t) }

func (realClock) NewTimer(d time.Duration) (Timer, <-chan time.Time) {
	t := time.NewTimer(d)
	return t, t.C
}

func (realClock) NewTicker(d time.Duration) (Ticker, <-chan time.Time) {
	t := time.NewTicker(d)
	return t, t.C
}

func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return time.AfterFunc(d, f)
}
