package scheduler

import (
	"context"
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
// process) and at least every poll (events committed by other processes;
// LISTEN/NOTIFY wake-ups on Postgres are not wired yet). poll <= 0 means 100ms.
func (c *EventCommitter) Subscribe(ctx context.Context, runID, afterFence, afterSeq int64, poll time.Duration) <-chan *driver.RunEvent {
	if poll <= 0 {
		poll = 100 * time.Millisecond
	}
	out := make(chan *driver.RunEvent, 64)
	go func() {
		defer close(out)
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
			case <-tick:
			}
		}
	}()
	return out
}
