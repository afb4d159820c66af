package batcher

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/rt"
)

// Config configures a Batcher. Zero values mean the defaults.
type Config[T any] struct {
	// Name labels the batcher in logs and goroutine labels. Defaults to
	// "batcher".
	Name string
	// MaxBatch is the most items one flush carries. Defaults to 1000.
	MaxBatch int
	// FlushAt flushes as soon as this many items are pending. Defaults to
	// MaxBatch; it is capped at MaxBatch.
	FlushAt int
	// MaxWait is how long, after the first item of a batch arrives, the
	// loop waits for more before flushing. Defaults to 0: no timer, flush
	// what is queued at once.
	MaxWait time.Duration
	// Buffer bounds the items waiting for a flush; Add blocks while it is
	// full. Defaults to 4 × MaxBatch.
	Buffer int
	// BackoffMin is the first retry's delay; each further retry of a batch
	// doubles it up to BackoffMax. Default 1ms and 1s.
	BackoffMin, BackoffMax time.Duration
	// MaxAttempts bounds the flushes of one item whose error stays
	// retryable. Defaults to 0: retry until success or Stop.
	MaxAttempts int
	// AttemptTimeout bounds one flush call (a context deadline, so on the
	// real clock). Defaults to 0: no bound but Stop's.
	AttemptTimeout time.Duration

	// Flush writes items and returns nil when every item succeeded, or one
	// error per item (nil for the ones that succeeded). Required. It is
	// called from one goroutine at a time and must not keep items.
	Flush func(ctx context.Context, items []T) []error
	// Retryable says whether an item's error may go away on a new attempt.
	// Defaults to every error being retryable.
	Retryable func(err error) bool
	// Done receives the final outcome of the items of one flush (errs is
	// nil when all succeeded). Optional. It runs on the loop's goroutine,
	// so it must not block on the batcher.
	Done func(items []T, errs []error)

	// Clock times MaxWait and the backoff. Defaults to the real clock.
	Clock clock.Clock
	// Runtime starts the loop and makes its waits. Defaults to
	// rt.Real(Clock); the simulator sets its own.
	Runtime rt.Runtime
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

func (c Config[T]) withDefaults() (Config[T], error) {
	if c.Flush == nil {
		return c, fmt.Errorf("batcher: Config.Flush is required")
	}
	if c.Name == "" {
		c.Name = "batcher"
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 1000
	}
	if c.FlushAt <= 0 || c.FlushAt > c.MaxBatch {
		c.FlushAt = c.MaxBatch
	}
	if c.Buffer <= 0 {
		c.Buffer = 4 * c.MaxBatch
	}
	if c.BackoffMin <= 0 {
		c.BackoffMin = time.Millisecond
	}
	if c.BackoffMax < c.BackoffMin {
		c.BackoffMax = max(time.Second, c.BackoffMin)
	}
	if c.MaxWait < 0 {
		return c, fmt.Errorf("batcher: Config.MaxWait %v is negative", c.MaxWait)
	}
	if c.Retryable == nil {
		c.Retryable = func(error) bool { return true }
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.Runtime == nil {
		c.Runtime = rt.Real(c.Clock)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}
