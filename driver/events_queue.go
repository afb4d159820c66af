package driver

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// QueueEventLister reads a queue's run events in commit order: the read
// behind the queue-wide event stream (GET /v1/queues/{queue}/events/stream).
// It is part of EffectStore.
//
// Events are keyed per run (run, fence, seq), which orders one run's
// events but not a queue's. Each stored event therefore also carries a
// position, assigned by the transaction that inserted it, and a queue's
// events are listed by (position, run, fence, seq). The contract that makes
// a cursor over it safe to resume:
//
//   - every event a list returns is durable, and
//   - an event committed later never sorts before one already listed.
//
// So a reader that resumes after the last event it saw misses none and
// sees none twice. SQLite, one writer at a time, takes the position from a
// counter bumped inside the append transaction; Postgres, where
// transactions commit in any order, takes the inserting transaction's id
// and lists only events whose transaction is older than every transaction
// still in progress (pg_snapshot_xmin), since only those can no longer be
// joined by an earlier-sorting commit — an event becomes listable once the
// transactions that began before its own have ended.
type QueueEventLister interface {
	// RunEventListQueue returns the events of the queue's runs after
	// After, in (Pos, RunID, Fence, Seq) order, at most Limit, and
	// whether events after them exist that are not listable yet.
	RunEventListQueue(ctx context.Context, p *RunEventListQueueParams) (*QueueEventPage, error)
}

// QueueEventPage is one read of a queue's events.
type QueueEventPage struct {
	Events []*QueueEvent
	// Pending: an event of the queue after the last one listed is
	// committed or being committed, but held back until older
	// transactions end (Postgres); list again soon. Never set on SQLite.
	Pending bool
}

// QueueEventCursor is a position in a queue's event order; the zero value
// is its start.
type QueueEventCursor struct {
	Pos, RunID, Fence, Seq int64
}

// QueueEvent is one event of a queue, with its place in the queue's order.
type QueueEvent struct {
	RunEvent
	Pos int64 // the position its transaction gave it; 0 for events stored before positions were
}

// Cursor is the cursor right at e: a list after it starts after e.
func (e *QueueEvent) Cursor() QueueEventCursor {
	return QueueEventCursor{Pos: e.Pos, RunID: e.RunID, Fence: e.Fence, Seq: e.Seq}
}

// RunEventListQueueParams reads a queue's events.
type RunEventListQueueParams struct {
	Queue string
	After QueueEventCursor
	Limit int // 0 means DefaultRunEventListLimit; at most MaxRunEventListLimit
}

// Validate checks the queue, the cursor and the page size.
func (p *RunEventListQueueParams) Validate() error {
	if err := runs.ValidateQueue(p.Queue); err != nil {
		return err
	}
	if a := p.After; a.Pos < 0 || a.RunID < 0 || a.Fence < 0 || a.Seq < 0 {
		return &journal.InputError{Field: "after", Problem: fmt.Sprintf("cursor %d:%d:%d:%d has a negative part", a.Pos, a.RunID, a.Fence, a.Seq)}
	}
	if p.Limit < 0 || p.Limit > MaxRunEventListLimit {
		return &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d is outside 0..%d", p.Limit, MaxRunEventListLimit)}
	}
	return nil
}

func (p *RunEventListQueueParams) normalized() (*RunEventListQueueParams, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q := *p
	q.Limit = orDefault(p.Limit, DefaultRunEventListLimit)
	return &q, nil
}
