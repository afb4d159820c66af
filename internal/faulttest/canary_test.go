package faulttest

import (
	"sync"
	"testing"
	"time"
)

// canaryEvery is how often the canary asks to wake.
const canaryEvery = 5 * time.Millisecond

// canary measures how late this process is scheduled: a goroutine that
// asks to wake every canaryEvery and records each wake. On a loaded
// machine the test's own reclaimer can be held up the same way (its
// period P is ≈33ms), and a strand is not the protocol's fault for the
// time no goroutine of the process ran; see scenario.check.
type canary struct {
	mu    sync.Mutex
	wakes []time.Time
	stop  chan struct{}
	done  chan struct{}
}

func startCanary(t *testing.T) *canary {
	c := &canary{wakes: []time.Time{time.Now()}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		tick := time.NewTicker(canaryEvery)
		defer tick.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-tick.C:
				c.mu.Lock()
				c.wakes = append(c.wakes, time.Now())
				c.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		close(c.stop)
		<-c.done
	})
	return c
}

// stall is the longest stretch within [from, to] that the canary
// overslept: a gap between two wakes, beyond canaryEvery, clipped to the
// interval. The longest, not the sum: one clear stall is what can hold
// the reclaimer's next pass up; many small ones are ordinary jitter, for
// which P leaves room.
func (c *canary) stall(from, to time.Time) interval {
	c.mu.Lock()
	defer c.mu.Unlock()
	var worst interval
	for i := 1; i < len(c.wakes); i++ {
		gap := interval{from: c.wakes[i-1].Add(canaryEvery), to: c.wakes[i]}.clip(from, to)
		if gap.length() > worst.length() {
			worst = gap
		}
	}
	return worst
}
