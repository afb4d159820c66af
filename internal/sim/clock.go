package sim

import (
	"time"

	"github.com/leasehold/leasehold/clock"
)

// epoch is virtual time zero on every simulated clock's scale.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// simClock is a process's (or the store's) clock: offset + (1 + drift) ×
// virtual time, plus a step from stepAt on. It tells time only: the
// simulator's threads replace timers, so the keeper and driver get no
// timer from it.
type simClock struct {
	l      *loop
	offset time.Duration
	drift  float64
	step   time.Duration
	stepAt time.Duration
}

var _ clock.Clock = (*simClock)(nil)

func (c *simClock) at(v time.Duration) time.Time {
	d := c.offset + v + time.Duration(c.drift*float64(v))
	if c.step != 0 && v >= c.stepAt {
		d += c.step
	}
	return epoch.Add(d)
}

func (c *simClock) Now() time.Time                  { return c.at(c.l.now) }
func (c *simClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c *simClock) NewTimer(time.Duration) (clock.Timer, <-chan time.Time) {
	panic("sim: clocks make no timers; threads sleep on the loop")
}
func (c *simClock) NewTicker(time.Duration) (clock.Ticker, <-chan time.Time) {
	panic("sim: clocks make no tickers; threads sleep on the loop")
}
func (c *simClock) AfterFunc(time.Duration, func()) clock.Timer {
	panic("sim: clocks make no timers; threads sleep on the loop")
}
