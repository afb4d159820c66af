package scheduler

import (
	"context"
	"sync"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// flushedSignal returns a channel closed at the committer's next flush.
func (c *EventCommitter) flushedSignal() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.flushed == nil {
		c.flushed = make(chan struct{})
	}
	return c.flushed
}

// signalFlushed wakes subscribers after a flush.
func (c *EventCommitter) signalFlushed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.flushed != nil {
		close(c.flushed)
		c.flushed = nil
	}
}

// Subscribe streams a run's events in (fence, seq) order, starting after
// (afterFence, afterSeq) — (0, 0) for all — until ctx ends, when the channel
// is closed. Events are read from the table, the source of truth, so a
// subscriber sees only durable events and a resumed subscription misses
// none. It reads again whenever this committer flushes (events of this
// process), whenever the store notifies that the run got events, if it is
// a driver.EventNotifier (Postgres LISTEN/NOTIFY: events committed by
// other processes), and at least every poll, the fallback for lost
// notifications and stores without them. poll <= 0 means 100ms.
func (c *EventCommitter) Subscribe(ctx context.Context, runID, afterFence, afterSeq int64, poll time.Duration) <-chan *driver.RunEvent {
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	out := make(chan *driver.RunEvent, 64)
	go func() {
		defer close(out)
		notified, leave := c.notifyJoin(runID) // before the first read: no commit falls between
		defer leave()
		for {
			wake := c.flushedSignal()
			evs, err := c.store.RunEventList(ctx, &driver.RunEventListParams{RunID: runID, AfterFence: afterFence, AfterSeq: afterSeq, Limit: 1000})
			if err != nil && ctx.Err() == nil {
				c.cfg.Logger.Warn("subscription read failed; retrying", "run", runID, "err", err)
			}
			for _, ev := range evs {
				select {
				case out <- ev:
					afterFence, afterSeq = ev.Fence, ev.Seq
				case <-ctx.Done():
					return
				}
			}
			if len(evs) == 1000 {
				continue // more are waiting
			}
			t, tick := c.cfg.Clock.NewTimer(poll)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-wake:
				t.Stop()
			case <-notified:
				t.Stop()
			case <-tick:
			}
		}
	}()
	return out
}

// notifyHub fans one driver.EventNotifier listener out to the subscribers
// of one committer, by run id. The committer holds it while it has
// subscribers: started lazily by the first, stopped when the last leaves.
type notifyHub struct {
	refs int // subscribers; guarded by EventCommitter.hubMu

	mu     sync.Mutex
	subs   map[int64]map[chan struct{}]struct{}
	cancel context.CancelFunc // nil: not listening
	gen    int
}

// notifyJoin registers a subscriber of runID and returns the channel its
// notifications arrive on (nil if the store has none) and the function
// that unregisters it. The listener is started (or restarted, after it
// failed) here, so when notifyJoin returns the store listens, if it can.
func (c *EventCommitter) notifyJoin(runID int64) (<-chan struct{}, func()) {
	n, ok := c.store.(driver.EventNotifier)
	if !ok {
		return nil, func() {}
	}
	c.hubMu.Lock()
	h := c.hub
	if h == nil {
		h = &notifyHub{subs: map[int64]map[chan struct{}]struct{}{}}
		c.hub = h
	}
	h.refs++
	c.hubMu.Unlock()

	wake := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs[runID] == nil {
		h.subs[runID] = map[chan struct{}]struct{}{}
	}
	h.subs[runID][wake] = struct{}{}
	if h.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		ch, err := n.RunEventsNotify(ctx)
		if err != nil {
			cancel()
			c.cfg.Logger.Warn("event notifications unavailable; subscriptions poll", "err", err)
		} else {
			h.gen++
			h.cancel = cancel
			go h.fanOut(ch, h.gen)
		}
	}
	h.mu.Unlock()

	return wake, func() {
		h.mu.Lock()
		delete(h.subs[runID], wake)
		if len(h.subs[runID]) == 0 {
			delete(h.subs, runID)
		}
		h.mu.Unlock()
		c.hubMu.Lock()
		defer c.hubMu.Unlock()
		if h.refs--; h.refs == 0 {
			c.hub = nil
			h.mu.Lock()
			if h.cancel != nil {
				h.cancel()
				h.cancel = nil
			}
			h.mu.Unlock()
		}
	}
}

// fanOut wakes the subscribers of each notified run (all of them on 0,
// "any run") without blocking: a wake-up already pending covers the next.
// When the listener's channel closes it marks the hub not listening, so the
// next subscriber starts it again.
func (h *notifyHub) fanOut(ch <-chan int64, gen int) {
	for id := range ch {
		h.mu.Lock()
		if id == 0 {
			for _, subs := range h.subs {
				wakeAll(subs)
			}
		} else {
			wakeAll(h.subs[id])
		}
		h.mu.Unlock()
	}
	h.mu.Lock()
	if h.gen == gen && h.cancel != nil {
		h.cancel()
		h.cancel = nil
	}
	h.mu.Unlock()
}

func wakeAll(subs map[chan struct{}]struct{}) {
	for w := range subs {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}
