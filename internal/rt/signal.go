package rt

import (
	"context"
	"sync"
	"time"

	"github.com/leasehold/leasehold/clock"
)

// Signal is a coalescing wake-up for one waiter, a chan struct{} of
// capacity one: Notify marks it (a mark already there absorbs the next),
// and a Wait that sees the mark consumes it. The zero value is ready; set
// RT before first use (nil: the real runtime).
type Signal struct {
	RT Runtime

	mu sync.Mutex
	ev Event // the mark's event; nil until first used
}

func (s *Signal) event() Event {
	if s.ev == nil {
		s.ev = Or(s.RT).NewEvent()
	}
	return s.ev
}

// Notify marks the signal, waking its waiter.
func (s *Signal) Notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.event().Fire()
}

// Wait waits for a mark, ctx's end or d (d < 0: no timer), and consumes
// the mark it woke for.
func (s *Signal) Wait(ctx context.Context, d time.Duration) Woke {
	s.mu.Lock()
	ev := s.event()
	s.mu.Unlock()
	w := Or(s.RT).Wait(ctx, ev, d)
	if w == Fired {
		s.mu.Lock()
		if s.ev == ev {
			s.ev = nil // consumed: the next Notify fires a new event
		}
		s.mu.Unlock()
	}
	return w
}

// Sleep waits d on r's clock; false if ctx ended first.
func Sleep(r Runtime, ctx context.Context, d time.Duration) bool {
	return Or(r).Wait(ctx, nil, d) == Timeout
}

// Every calls fn every period on a fixed beat (a ticker's: the time fn
// takes does not push the next call back, and a late wake-up skips beats
// rather than queueing them) until ctx ends. c reads the time.
func Every(r Runtime, c clock.Clock, ctx context.Context, period time.Duration, fn func()) {
	r = Or(r)
	next := c.Now().Add(period)
	for {
		if r.Wait(ctx, nil, max(next.Sub(c.Now()), 0)) == Done {
			return
		}
		fn()
		next = next.Add(period)
		if now := c.Now(); next.Before(now) {
			next = now
		}
	}
}
