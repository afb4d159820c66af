package leasehold

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// Config configures a Client over the driver passed to NewClient (the
// store itself — SQLite's file, Postgres's URL, pool sizes and timeouts —
// is the driver's configuration: sqlite.Config, postgres.Config). The zero
// value is valid: the SPEC's world timing, the real clock, slog.Default().
type Config struct {
	// WorldTiming is the lease timing of worlds. Zero fields take
	// lease.WorldDefaults() (T_lease 30s, T_renew 5s, T_drain 1s, D_stop 15s,
	// S 5s, P 1s); the result is validated at Open.
	WorldTiming lease.Timing
	// Clock drives the sweeper's and reclaimer's periods and the workers'
	// timers. Defaults to the real clock. (SQLite's store clock is
	// sqlite.Config.Clock.)
	Clock clock.Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// SkipMigrate skips applying migrations at Open (the schema must then
	// be current; see Client.Migrate and `leasehold migrate`).
	SkipMigrate bool
	// Queues, when set, is the closed set of run queues: Enqueue and
	// NewWorker refuse any other queue with an *UnknownQueueError
	// (ErrUnknownQueue, ErrInvalid), so a typo cannot park runs where no
	// worker will ever look. Empty accepts every valid queue name.
	Queues []string
	// Retention is how long the cleaner (Client.StartCleaner) keeps
	// finished runs, with their effects and events, per final state. Nil
	// takes DefaultRetention(): completed 24 h, failed and cancelled 7
	// days. A field of 0 keeps that state's runs forever; a negative one,
	// or one past runs.MaxRetention (ten years), is refused at NewClient
	// with an error naming the field (ErrInvalid). A run with an
	// unresolved uncertain effect is kept whatever its age.
	Retention *Retention
	// CleanerInterval is the period of the cleaner's passes. Defaults to
	// 30s; negative is refused.
	CleanerInterval time.Duration
	// CleanerBatch bounds one delete transaction of the cleaner, in runs
	// (each with its effects and events). Defaults to 1000 on Postgres and
	// DefaultSQLiteCleanerBatch (250) on SQLite, where a batch holds the
	// one writer; at most driver.MaxRunDeleteBatch; negative is refused.
	CleanerBatch int
	// Periodic are the periodic schedules Client.StartPeriodic runs: each
	// a cron expression or a fixed interval and the run its ticks
	// enqueue, exactly one per tick across any number of processes
	// declaring the same schedule (periodic.go). A schedule that does not
	// parse is refused at NewClient with an error naming its field
	// (periodic[i].cron…, ErrInvalid).
	Periodic []PeriodicRun
	// CloseTimeout bounds Client.Close: how long the last event flush and
	// the queued appends are retried before what is still unwritten is
	// failed back to its callers with ErrClosed. Defaults to 5s.
	CloseTimeout time.Duration
}

func (c Config) withDefaults() Config {
	c.WorldTiming = c.WorldTiming.WithDefaults(lease.WorldDefaults())
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.CloseTimeout <= 0 {
		c.CloseTimeout = DefaultCloseTimeout
	}
	return c
}

// DefaultSQLiteCleanerBatch is Config.CleanerBatch's default on SQLite.
const DefaultSQLiteCleanerBatch = 250

// DefaultCloseTimeout is Config.CloseTimeout's default.
const DefaultCloseTimeout = 5 * time.Second

// Validate reports a configuration Open would refuse, naming the values.
func (c Config) Validate() error {
	c = c.withDefaults()
	for _, q := range c.Queues {
		if err := runs.ValidateQueue(q); err != nil {
			return fmt.Errorf("leasehold: Queues: %w", err)
		}
	}
	if err := c.WorldTiming.Validate(); err != nil {
		return fmt.Errorf("leasehold: world timing: %w", err)
	}
	if c.Retention != nil {
		if err := c.Retention.Validate(); err != nil {
			return fmt.Errorf("leasehold: %w", err)
		}
	}
	if err := scheduler.ValidatePeriodic(c.Periodic); err != nil {
		return fmt.Errorf("leasehold: %w", err)
	}
	for i, p := range c.Periodic {
		if len(c.Queues) > 0 && !slices.Contains(c.Queues, p.Run.Queue) {
			return fmt.Errorf("leasehold: periodic[%d].run: %w", i, &UnknownQueueError{Queue: p.Run.Queue, Known: c.Queues})
		}
	}
	if c.CleanerInterval < 0 {
		return fmt.Errorf("leasehold: %w", &journal.InputError{Field: "cleaner_interval", Problem: fmt.Sprintf("%s is negative", c.CleanerInterval)})
	}
	if c.CleanerBatch < 0 || c.CleanerBatch > driver.MaxRunDeleteBatch {
		return fmt.Errorf("leasehold: %w", &journal.InputError{Field: "cleaner_batch", Problem: fmt.Sprintf("%d is outside 0 (default)..%d", c.CleanerBatch, driver.MaxRunDeleteBatch)})
	}
	return nil
}

// Retention is how long finished runs are kept per final state; see
// Config.Retention.
type Retention = runs.Retention

// DefaultRetention is completed 24 h, failed and cancelled 7 days.
func DefaultRetention() Retention { return runs.DefaultRetention() }

// retention is the retention in force.
func (c Config) retention() Retention {
	if c.Retention == nil {
		return DefaultRetention()
	}
	return *c.Retention
}
