package doctor

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/clock"
)

// Sampler reads the store's clock. driver.Driver satisfies it.
type Sampler interface {
	// StoreNow returns the store's clock reading: the clock every lease
	// expiry is computed and compared on.
	StoreNow(ctx context.Context) (time.Time, error)
}

// Probe is one NTP-style measurement of the store clock against the app's.
type Probe struct {
	// Index is the probe's place in the sample, from 0.
	Index int
	// At is the probe's midpoint on the app's monotonic clock, measured from
	// the start of sampling.
	At time.Duration
	// App is the same midpoint as a wall time: the anchor read when
	// sampling started plus At.
	App time.Time
	// Store is the store's clock reading, without a monotonic reading.
	Store time.Time
	// RTT is the round trip of the store call on the app's clock.
	RTT time.Duration
	// Offset is Store - App: positive when the store clock is ahead. The
	// true offset is within ±Bound() of it.
	Offset time.Duration
}

// Bound is the probe's measurement error bound, RTT/2 rounded up: the store
// read its clock somewhere inside the round trip, and the midpoint is at
// most half of it away.
func (p Probe) Bound() time.Duration { return (p.RTT + 1) / 2 }

// Sample takes n probes of s, waiting every between the end of one and the
// start of the next on c's timers (every <= 0: back to back). It returns the
// probes taken; on an error (a failed store call, ctx ending during a wait)
// it returns those taken so far with the error.
//
// c must be the app's clock with its monotonic reading (clock.Real) or a
// clock.Fake. Every probe's app time is the wall anchor read here once plus
// monotonic time elapsed since, so a step of the app's own wall clock during
// the sample does not show up as a step of the store's.
func Sample(ctx context.Context, s Sampler, c clock.Clock, n int, every time.Duration) ([]Probe, error) {
	if n < 1 {
		return nil, fmt.Errorf("doctor: sampling %d probes: need at least 1", n)
	}
	anchor := c.Now()
	// Round(0) strips the monotonic reading: wall is the one wall-clock
	// figure on the app side, and every later app time is built from it
	// plus a monotonic difference (t0.Sub(anchor) uses the monotonic
	// readings when both have one).
	wall := anchor.Round(0)
	probes := make([]Probe, 0, n)
	for i := range n {
		if i > 0 && every > 0 {
			if err := wait(ctx, c, every); err != nil {
				return probes, fmt.Errorf("doctor: waiting before probe %d: %w", i, err)
			}
		}
		t0 := c.Now()
		st, err := s.StoreNow(ctx)
		t1 := c.Now()
		if err != nil {
			return probes, fmt.Errorf("doctor: probe %d: %w", i, err)
		}
		// A monotonic clock never runs back; a fake set back by a test can.
		// A negative round trip would make a negative bound, so clamp it.
		rtt := max(t1.Sub(t0), 0)
		at := t0.Sub(anchor) + rtt/2
		app := wall.Add(at)
		// A store clock that is this process's (SQLite) comes with a
		// monotonic reading; Sub would then compare monotonic readings and
		// hide the very wall-clock steps the doctor is looking for.
		st = st.Round(0)
		probes = append(probes, Probe{Index: i, At: at, App: app, Store: st, RTT: rtt, Offset: st.Sub(app)})
	}
	return probes, nil
}

// wait blocks for d on c's timer, or until ctx ends.
func wait(ctx context.Context, c clock.Clock, d time.Duration) error {
	tm, ch := c.NewTimer(d)
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		tm.Stop()
		return ctx.Err()
	}
}
