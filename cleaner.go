package leasehold

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leasehold/leasehold/internal/scheduler"
)

// CleanReport counts what one cleaner pass deleted: batches (one short
// transaction each), runs, and their effects and events.
type CleanReport = scheduler.CleanReport

// StartCleaner runs the retention cleaner every Config.CleanerInterval
// until Close: finished runs past Config.Retention are deleted with their
// effects and events, in batches of at most Config.CleanerBatch runs, each
// its own short transaction. Every replica may run one at once (the store
// hands each run to one batch). A run with an unresolved uncertain effect
// is never deleted; a world's journal is never touched. It is idempotent
// and fails with ErrClosed after Close.
func (c *Client) StartCleaner(ctx context.Context) error { return c.cleaner.Start(ctx) }

// CleanFinished runs one cleaner pass now, whether or not the cleaner is
// started (an operator's `leasehold` command, a test).
func (c *Client) CleanFinished(ctx context.Context) (CleanReport, error) {
	return c.cleaner.CleanOnce(ctx)
}

// CleanerCollector is the cleaner's Prometheus metrics
// (leasehold_cleaner_*: runs deleted by state, effects, events, batches,
// errors, pass duration), for the caller's registry.
func (c *Client) CleanerCollector() prometheus.Collector { return c.cleaner.Collector() }
