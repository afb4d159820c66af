package scheduler

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/startstop"
	"github.com/leasehold/leasehold/runs"
)

// CleanerConfig configures a Cleaner. Zero values mean the defaults,
// except Retention, which is taken as given (0 keeps a state forever).
type CleanerConfig struct {
	// Retention is how long finished runs are kept per final state.
	Retention runs.Retention
	// Interval is the period between passes. Defaults to 30s.
	Interval time.Duration
	// Batch bounds one delete transaction, in runs. Defaults to 1000.
	Batch int
	// Clock drives the period. Defaults to the real clock.
	Clock clock.Clock
	// Runtime runs the loop. Defaults to rt.Real(Clock).
	Runtime rt.Runtime
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// OnPass, if set, is called after every pass (tests wait on it).
	OnPass func(deleted int64, err error)
}

// Cleaner defaults.
const (
	DefaultCleanerInterval = 30 * time.Second
	DefaultCleanerBatch    = 1000
)

var _ startstop.Service = (*Cleaner)(nil)

// Cleaner deletes finished runs past their retention, with their effects
// and events, every Interval: per final state, batches of at most Batch
// runs, each its own short transaction, repeated until a batch comes back
// short. Every replica may run one (the store gives each run to one
// batch: SKIP LOCKED on Postgres, the single writer on SQLite). A run
// with an unresolved uncertain effect is never deleted, and a world's
// journal is never touched: the driver's RunDeleteFinished.
type Cleaner struct {
	rs      driver.RunRetainer
	cfg     CleanerConfig
	life    startstop.Lifecycle
	metrics *cleanerMetrics
}

// NewCleaner returns a stopped Cleaner. cfg.Retention must be valid
// (runs.Retention.Validate): the client checks it at NewClient.
func NewCleaner(rs driver.RunRetainer, cfg CleanerConfig) *Cleaner {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultCleanerInterval
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultCleanerBatch
	}
	cfg.Batch = min(cfg.Batch, driver.MaxRunDeleteBatch)
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Runtime == nil {
		cfg.Runtime = rt.Real(cfg.Clock)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Cleaner{rs: rs, cfg: cfg, metrics: newCleanerMetrics()}
	c.life.Name = "cleaner"
	c.life.RT = cfg.Runtime
	return c
}

// CleanReport counts what one pass deleted.
type CleanReport struct {
	Batches               int
	Runs, Effects, Events int64
}

// CleanOnce deletes every finished run past its retention, batch by
// batch, and reports what it deleted (also when it stopped on an error).
func (c *Cleaner) CleanOnce(ctx context.Context) (CleanReport, error) {
	var rep CleanReport
	start := time.Now()
	defer func() { c.metrics.passSeconds.Observe(time.Since(start).Seconds()) }()
	for _, s := range []runs.State{runs.StateCompleted, runs.StateFailed, runs.StateCancelled} {
		keep := c.cfg.Retention.For(s)
		if keep <= 0 {
			continue // kept forever
		}
		for ctx.Err() == nil {
			t0 := c.cfg.Clock.Now()
			res, err := c.rs.RunDeleteFinished(ctx, &driver.RunDeleteFinishedParams{State: s, OlderThan: keep, Limit: c.cfg.Batch})
			if err != nil {
				c.metrics.errors.Inc()
				return rep, err
			}
			rep.Batches++
			rep.Runs += res.Runs
			rep.Effects += res.Effects
			rep.Events += res.Events
			c.metrics.batches.Inc()
			c.metrics.runs.WithLabelValues(string(s)).Add(float64(res.Runs))
			c.metrics.effects.Add(float64(res.Effects))
			c.metrics.events.Add(float64(res.Events))
			if res.Runs < int64(c.cfg.Batch) {
				break
			}
			// Yield as long as the batch took (half the store's time at
			// most): on SQLite the batch held the one writer, and a
			// claim that queued behind it goes first now instead of
			// behind the next batch too.
			if !rt.Sleep(c.cfg.Runtime, ctx, max(c.cfg.Clock.Now().Sub(t0), time.Millisecond)) {
				break
			}
		}
	}
	return rep, ctx.Err()
}

// Start runs the cleaning loop every Interval until Stop or ctx ends. It
// is idempotent; after Stop it returns startstop.ErrStopped.
func (c *Cleaner) Start(ctx context.Context) error {
	return c.life.Start(ctx, func(ctx context.Context) error {
		c.life.Go("clean", func() {
			rt.Every(c.cfg.Runtime, c.cfg.Clock, ctx, c.cfg.Interval, func() {
				rep, err := c.CleanOnce(ctx)
				if err != nil && ctx.Err() == nil {
					c.cfg.Logger.Warn("cleaning finished runs failed; retrying next period", "err", err)
				}
				if rep.Runs > 0 {
					c.cfg.Logger.Info("finished runs deleted", "runs", rep.Runs, "effects", rep.Effects,
						"events", rep.Events, "batches", rep.Batches)
				}
				if c.cfg.OnPass != nil {
					c.cfg.OnPass(rep.Runs, err)
				}
			})
		})
		return nil
	})
}

// Stop stops the loop and waits for it until ctx ends; a batch in flight
// is cancelled (one transaction: nothing half-deleted).
func (c *Cleaner) Stop(ctx context.Context) error { return c.life.Stop(ctx, nil) }

// Started is closed once the loop runs.
func (c *Cleaner) Started() <-chan struct{} { return c.life.Started() }

// Stopped is closed once the loop has returned.
func (c *Cleaner) Stopped() <-chan struct{} { return c.life.Stopped() }

// Collector returns the cleaner's Prometheus metrics, for a registry of
// the caller's (the server's /metrics).
func (c *Cleaner) Collector() prometheus.Collector { return c.metrics }

// cleanerMetrics are the cleaner's figures, unregistered until a caller
// registers Collector (two clients in one process do not collide).
type cleanerMetrics struct {
	runs            *prometheus.CounterVec
	effects, events prometheus.Counter
	batches, errors prometheus.Counter
	passSeconds     prometheus.Histogram
}

func newCleanerMetrics() *cleanerMetrics {
	return &cleanerMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leasehold_cleaner_deleted_runs_total",
			Help: "Finished runs deleted past their retention, by final state."}, []string{"state"}),
		effects: prometheus.NewCounter(prometheus.CounterOpts{Name: "leasehold_cleaner_deleted_effects_total",
			Help: "Effect ledger rows deleted with their runs."}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "leasehold_cleaner_deleted_events_total",
			Help: "Run events deleted with their runs."}),
		batches: prometheus.NewCounter(prometheus.CounterOpts{Name: "leasehold_cleaner_batches_total",
			Help: "Delete transactions (batches) the cleaner ran."}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "leasehold_cleaner_errors_total",
			Help: "Cleaner passes stopped by a store error (retried next period)."}),
		passSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "leasehold_cleaner_pass_seconds",
			Help: "Duration of one cleaner pass over every final state.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
	}
}

func (m *cleanerMetrics) all() []prometheus.Collector {
	return []prometheus.Collector{m.runs, m.effects, m.events, m.batches, m.errors, m.passSeconds}
}

// Describe implements prometheus.Collector.
func (m *cleanerMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.all() {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (m *cleanerMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.all() {
		c.Collect(ch)
	}
}
