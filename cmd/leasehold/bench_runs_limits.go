package main

import (
	"context"
	"fmt"
	"io"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
)

// benchLimits are `bench runs`' queue limit flags: with any set, each
// shape's queue gets them before it runs, so the claim goes through the
// limited path (the lock of the queue's row, the counts) — the figure
// beside the same shape without them.
type benchLimits struct {
	maxRunning, rate *int
	per              *time.Duration
}

func benchLimitFlags(fs *flag.FlagSet) benchLimits {
	return benchLimits{
		maxRunning: fs.Int("max-running", 0, "global concurrency limit set on each shape's queue (0: none)"),
		rate:       fs.Int("rate", 0, "rate limit set on each shape's queue: starts per --per (0: none)"),
		per:        fs.Duration("per", 0, "the rate limit's window (with --rate)"),
	}
}

// apply sets the limits on queue, if any is set, and says so.
func (l benchLimits) apply(ctx context.Context, store scheduler.Store, queue string, out io.Writer) error {
	if *l.maxRunning == 0 && *l.rate == 0 {
		return nil
	}
	qs, ok := store.(driver.QueueStore)
	if !ok {
		return fmt.Errorf("the store has no queue registry")
	}
	q, err := qs.QueueSetLimits(ctx, &driver.QueueSetLimitsParams{Queue: queue, MaxRunning: *l.maxRunning,
		RateLimit: *l.rate, RatePeriod: *l.per})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  (queue %s: %s)\n", q.Name, limitsText(q))
	return nil
}
