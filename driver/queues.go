package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// ErrUnknownQueue is the shared sentinel of a queue nobody knows.
var ErrUnknownQueue = lease.ErrUnknownQueue

// QueueStore is the queue registry (the queues table): pause and resume a
// queue cluster-wide, its global concurrency and rate limits, and the
// operator's listing. RunClaim reads the registry in its own statement, so
// a pause or a limit applies to every worker's next claim, and a limit is
// enforced by the store, never by a worker's memory.
//
// A queue is known to the store once it has a registry row — made by
// QueueSetLimits, or by QueuePause with Declare — or at least one run in
// any state. Enqueue writes no registry row: the enqueue path is
// untouched, and a queue with runs is known without one.
type QueueStore interface {
	// QueuePause sets a known queue's paused flag (true: pause, false:
	// resume), creating its registry row if it had none. A paused queue's
	// runs are not claimed (RunClaim returns none of them) from the commit
	// on; running runs finish. A queue the store does not know (no row,
	// no run) and p.Declare unset is refused with a *QueueUnknownError
	// (ErrUnknownQueue, ErrInvalid) and nothing is written.
	QueuePause(ctx context.Context, p *QueuePauseParams) (*Queue, error)
	// QueueSetLimits sets a queue's global limits, creating its registry
	// row if it had none (declaring the queue). Zero removes a limit.
	QueueSetLimits(ctx context.Context, p *QueueSetLimitsParams) (*Queue, error)
	// QueueList lists every known queue (registry rows and queues with
	// runs), ordered by name, with its runs counted by state.
	QueueList(ctx context.Context, p *QueueListParams) ([]*Queue, error)
}

// Queue limits' bounds (docs/LIMITS.md).
const (
	MaxQueueRunning    = 1_000_000 // QueueSetLimitsParams.MaxRunning
	MaxQueueRate       = 1_000_000 // QueueSetLimitsParams.RateLimit
	MinQueueRatePeriod = time.Millisecond
	MaxQueueRatePeriod = 24 * time.Hour
)

// Queue is a queue's registry row and its runs counted by state.
type Queue struct {
	Name   string
	Paused bool
	// MaxRunning is the most runs of the queue in state running at once,
	// across every worker; 0: no limit.
	MaxRunning int
	// RateLimit is the most claims (starts) of the queue's runs in any
	// window of RatePeriod; 0: no limit.
	RateLimit  int
	RatePeriod time.Duration
	// CreatedAt and UpdatedAt are the registry row's store times; zero for
	// a queue known only by its runs.
	CreatedAt, UpdatedAt time.Time
	// Counts maps each state with runs to how many (absent: none).
	Counts map[runs.State]int64
}

// Limited says whether RunClaim must count running runs or starts for
// this queue.
func (q *Queue) Limited() bool { return q.MaxRunning > 0 || q.RateLimit > 0 }

// QueuePauseParams pauses (Paused) or resumes a queue.
type QueuePauseParams struct {
	Queue  string
	Paused bool
	// Declare creates the queue's row even when the store does not know
	// the queue yet (the client passes it for a queue of Config.Queues).
	Declare bool
}

// Class implements lease.Classed: an operator write that must be durable
// before it is acknowledged.
func (*QueuePauseParams) Class() lease.Durability { return lease.SyncCritical }

// Validate checks the queue name.
func (p *QueuePauseParams) Validate() error { return runs.ValidateQueue(p.Queue) }

// QueueSetLimitsParams sets a queue's limits. 0 means no limit (a
// concurrency limit of 0 is not "stop the queue": that is QueuePause);
// negative or over the bounds is refused.
type QueueSetLimitsParams struct {
	Queue      string
	MaxRunning int           // 0..MaxQueueRunning
	RateLimit  int           // 0..MaxQueueRate
	RatePeriod time.Duration // with RateLimit > 0: MinQueueRatePeriod..MaxQueueRatePeriod, whole microseconds; else 0
}

// Class implements lease.Classed.
func (*QueueSetLimitsParams) Class() lease.Durability { return lease.SyncCritical }

// Validate checks the name and the limits, naming the offending field.
func (p *QueueSetLimitsParams) Validate() error {
	if err := runs.ValidateQueue(p.Queue); err != nil {
		return err
	}
	bad := func(field, format string, args ...any) error {
		return &journal.InputError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	if p.MaxRunning < 0 || p.MaxRunning > MaxQueueRunning {
		return bad("max_running", "%d is outside 0..%d (0: no limit; to stop a queue, pause it)", p.MaxRunning, MaxQueueRunning)
	}
	if p.RateLimit < 0 || p.RateLimit > MaxQueueRate {
		return bad("rate_limit", "%d is outside 0..%d (0: no limit)", p.RateLimit, MaxQueueRate)
	}
	if p.RateLimit == 0 {
		if p.RatePeriod != 0 {
			return bad("rate_period", "%s without a rate limit", p.RatePeriod)
		}
		return nil
	}
	if p.RatePeriod < MinQueueRatePeriod || p.RatePeriod > MaxQueueRatePeriod {
		return bad("rate_period", "%s is outside %s..%s", p.RatePeriod, MinQueueRatePeriod, MaxQueueRatePeriod)
	}
	if p.RatePeriod%time.Microsecond != 0 {
		return bad("rate_period", "%s is finer than the store's microseconds", p.RatePeriod)
	}
	return nil
}

// QueueListParams lists the known queues. It has no filter yet: the
// registry is small (one row per queue).
type QueueListParams struct{}

// Validate accepts every listing.
func (*QueueListParams) Validate() error { return nil }

// QueueUnknownError is a queue control call on a queue the store does not
// know: nothing was written. It unwraps to ErrUnknownQueue and ErrInvalid.
type QueueUnknownError struct{ Queue string }

func (e *QueueUnknownError) Error() string {
	return fmt.Sprintf("queue %q is unknown to the store (no run, never declared)", e.Queue)
}

// Unwrap returns ErrUnknownQueue and ErrInvalid.
func (e *QueueUnknownError) Unwrap() []error { return []error{ErrUnknownQueue, ErrInvalid} }
