package leasehold

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/runs"
)

// Run is a run's row; see package runs for its states.
type Run = driver.Run

// Enqueue is one run to enqueue: queue, JSON payload, priority (lower
// first), delay, max attempts, optional unique key.
type Enqueue = runs.Enqueue

// Enqueued is one enqueue's result: the run, and whether its unique key
// returned an existing run.
type Enqueued = driver.RunEnqueued

// UnknownQueueError names the queue and the known ones: Config.Queues,
// or none when the store does not know the queue in a queue control call
// (PauseQueue, ResumeQueue: no run, never declared). It unwraps to
// ErrUnknownQueue and ErrInvalid.
type UnknownQueueError struct {
	Queue string
	Known []string
}

func (e *UnknownQueueError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("leasehold: unknown queue %q (the store has no run of it and it was never declared; see Client.Queues)", e.Queue)
	}
	return fmt.Sprintf("leasehold: unknown queue %q (Config.Queues: %s)", e.Queue, strings.Join(e.Known, ", "))
}

// Unwrap returns ErrUnknownQueue and ErrInvalid.
func (e *UnknownQueueError) Unwrap() []error { return []error{ErrUnknownQueue, ErrInvalid} }

// checkQueue refuses a queue outside Config.Queues (when set).
func (c *Client) checkQueue(q string) error {
	if len(c.cfg.Queues) == 0 || slices.Contains(c.cfg.Queues, q) {
		return nil
	}
	return &UnknownQueueError{Queue: q, Known: c.cfg.Queues}
}

// Enqueue enqueues runs in one transaction, in order. With Config.Queues
// set, a run for any other queue refuses the whole batch, nothing written.
func (c *Client) Enqueue(ctx context.Context, rs ...Enqueue) ([]Enqueued, error) {
	for i := range rs {
		if err := c.checkQueue(rs[i].Queue); err != nil {
			return nil, fmt.Errorf("run %d of the batch: %w", i, err)
		}
	}
	return c.d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: rs})
}

// Run returns a run. ErrNotFound if it does not exist.
func (c *Client) Run(ctx context.Context, id int64) (*Run, error) {
	return c.d.RunGet(ctx, &driver.RunGetParams{ID: id})
}

// RunsFilter selects a page of runs for Client.Runs: after the cursor
// After (a run id; 0 for the first page), at most Limit (<= 0 means 100,
// at most 1000), of Queue and in State when set; held by Owner now, or
// holding UniqueKey now, when set (driver.RunListParams: each read through
// an index, never the whole table).
type RunsFilter struct {
	Queue     string
	State     runs.State
	Owner     string
	UniqueKey string
	After     int64
	Limit     int
}

// Runs lists runs ascending by id. The next page starts after the last
// run's id; a page shorter than the limit is the last. Paging by id never
// skips or repeats a run however the table changes between pages.
func (c *Client) Runs(ctx context.Context, f RunsFilter) ([]*Run, error) {
	return c.d.RunList(ctx, &driver.RunListParams{Queue: f.Queue, State: f.State, Owner: f.Owner, UniqueKey: f.UniqueKey,
		AfterID: f.After, Limit: f.Limit})
}

// RunCount is how many runs of one queue are in one state.
type RunCount = driver.RunCount

// RunCounts counts the runs by queue and state (ordered by queue, then
// state). It scans the runs table: an operator's summary, not a hot path.
func (c *Client) RunCounts(ctx context.Context) ([]RunCount, error) { return c.d.RunCounts(ctx) }

// Cancel cancels an available, running or blocked run (an operator action):
// the fence is incremented, so a running holder is fenced out.
func (c *Client) Cancel(ctx context.Context, id int64, reason string) (*Run, error) {
	return c.d.RunCancel(ctx, &driver.RunCancelParams{ID: id, Reason: reason})
}

// Unblock makes a blocked run available again.
func (c *Client) Unblock(ctx context.Context, id int64) (*Run, error) {
	return c.d.RunUnblock(ctx, &driver.RunUnblockParams{ID: id})
}

// NewWorker returns a worker over this client's store, sharing the
// client's event group committer (started with the worker's first Start).
// Register handlers with Handle, then Start; Stop waits for running
// handlers up to its context's deadline.
func (c *Client) NewWorker(cfg WorkerConfig) (*Worker, error) {
	for q := range cfg.Queues {
		if err := c.checkQueue(q); err != nil {
			return nil, err
		}
	}
	if cfg.Clock == nil {
		cfg.Clock = c.cfg.Clock
	}
	if cfg.Logger == nil {
		cfg.Logger = c.cfg.Logger
	}
	var err error
	c.eventsOnce.Do(func() { err = c.events.Start(context.Background()) }) // stopped by Close
	if err != nil {
		return nil, fmt.Errorf("new worker: starting the event committer: %w", err)
	}
	w, err := scheduler.NewWorker(c.d, c.events, cfg.internal())
	if err != nil {
		return nil, err
	}
	return &Worker{w: w, mw: slices.Clone(cfg.Middleware)}, nil
}

// StartReclaimer runs the run reclaimer every P until Close. It is
// idempotent and fails with ErrClosed after Close.
func (c *Client) StartReclaimer(ctx context.Context) error { return c.reclaimer.Start(ctx) }
