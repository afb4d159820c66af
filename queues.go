package leasehold

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// Queue is a queue as the store knows it: its registry row (paused, its
// global limits, when it was declared and last changed) and its runs
// counted by state (Client.Queues only).
//
// A queue is known to the store once it has runs, or once it was declared:
// by SetQueueLimits, or by a pause or resume of a queue of Config.Queues.
// Enqueue declares nothing (its path is unchanged); a queue without a
// registry row is unpaused and unlimited.
type Queue = driver.Queue

// QueueLimits are a queue's global limits, enforced by the store in every
// worker's claim statement (not in a worker's memory), on both stores:
//
//   - MaxRunning: at most this many of the queue's runs running at once
//     across every worker and process. A run whose lease expired counts
//     until the reclaimer returns it.
//   - RateLimit per RatePeriod: at most RateLimit claims (starts, retries
//     included) in any window of RatePeriod.
//
// 0 means no limit (to stop a queue, pause it: PauseQueue); a negative
// limit, a RatePeriod outside 1ms..24h with a rate, or one without a rate
// is refused (ErrInvalid), nothing changed. WorkerConfig.Queues still
// caps each worker's own handlers.
type QueueLimits struct {
	MaxRunning int           // 0..1,000,000
	RateLimit  int           // 0..1,000,000
	RatePeriod time.Duration // with RateLimit: 1ms..24h, whole microseconds
}

// PauseQueue pauses a queue cluster-wide: from its commit on, no worker
// claims the queue's runs (each sees it at its next claim, within its
// fetch interval, well inside P); running runs finish. Enqueues go on.
// A queue the store does not know — no run, never declared, not in
// Config.Queues — is refused with an *UnknownQueueError (ErrUnknownQueue,
// ErrInvalid) and nothing changes. Pausing a paused queue is a no-op.
func (c *Client) PauseQueue(ctx context.Context, queue string) (*Queue, error) {
	return c.pauseQueue(ctx, queue, true)
}

// ResumeQueue undoes PauseQueue: workers claim the queue's runs again at
// their next claim. An unknown queue is refused as PauseQueue refuses it.
func (c *Client) ResumeQueue(ctx context.Context, queue string) (*Queue, error) {
	return c.pauseQueue(ctx, queue, false)
}

func (c *Client) pauseQueue(ctx context.Context, queue string, paused bool) (*Queue, error) {
	if err := c.checkQueue(queue); err != nil {
		return nil, err
	}
	q, err := c.d.QueuePause(ctx, &driver.QueuePauseParams{Queue: queue, Paused: paused,
		Declare: slices.Contains(c.cfg.Queues, queue)})
	var unknown *driver.QueueUnknownError
	if errors.As(err, &unknown) {
		return nil, &UnknownQueueError{Queue: queue}
	}
	return q, err
}

// SetQueueLimits sets a queue's global limits (see QueueLimits), declaring
// the queue if the store did not know it; the pause flag is kept. Every
// claim after the commit honours them.
func (c *Client) SetQueueLimits(ctx context.Context, queue string, l QueueLimits) (*Queue, error) {
	if err := c.checkQueue(queue); err != nil {
		return nil, err
	}
	return c.d.QueueSetLimits(ctx, &driver.QueueSetLimitsParams{Queue: queue,
		MaxRunning: l.MaxRunning, RateLimit: l.RateLimit, RatePeriod: l.RatePeriod})
}

// Queues lists every queue the store knows, ordered by name, with its runs
// counted by state. It reads the whole runs table once: an operator's view.
func (c *Client) Queues(ctx context.Context) ([]*Queue, error) {
	return c.d.QueueList(ctx, &driver.QueueListParams{})
}
