package leasehold

import (
	"context"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// RunEvent is one durable event of a run: emitted by its handler under
// Fence with sequence number Seq (1, 2, 3 … within the fence).
type RunEvent = driver.RunEvent

// SubscribeOptions says where a subscription starts and how often it reads
// when nothing wakes it.
type SubscribeOptions struct {
	// AfterFence and AfterSeq resume after an event already seen: the
	// subscription delivers the events after (AfterFence, AfterSeq) in
	// (fence, seq) order. Zero for every event of the run.
	AfterFence, AfterSeq int64
	// Poll is the fallback read period, for stores that cannot notify
	// (SQLite in another process) and lost notifications. Defaults to
	// 100ms.
	Poll time.Duration
}

// Subscribe streams a run's events, in (fence, seq) order, until ctx ends;
// the channel is closed then. A subscriber sees only durable events (they
// are read from the table, the source of truth), and a resumed one misses
// none. Events this process commits wake it at once, as do events other
// processes commit on Postgres (LISTEN/NOTIFY).
func (c *Client) Subscribe(ctx context.Context, runID int64, o SubscribeOptions) <-chan *RunEvent {
	return c.events.Subscribe(ctx, runID, o.AfterFence, o.AfterSeq, o.Poll)
}

// Events reads a run's stored events after (afterFence, afterSeq), in
// (fence, seq) order, at most limit (<= 0 means 1000).
func (c *Client) Events(ctx context.Context, runID, afterFence, afterSeq int64, limit int) ([]*RunEvent, error) {
	return c.d.RunEventList(ctx, &driver.RunEventListParams{RunID: runID, AfterFence: afterFence, AfterSeq: afterSeq, Limit: limit})
}
