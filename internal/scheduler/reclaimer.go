package scheduler

import (
	"context"
	"log/slog"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/startstop"
	"github.com/leasehold/leasehold/lease"
)

// ReclaimerConfig configures a Reclaimer. Zero values mean the defaults.
type ReclaimerConfig struct {
	// Timing is the run timing; its Poll (P) is the reclaim period. Zero
	// fields take lease.RunDefaults() (P = 1s).
	Timing lease.Timing
	// Batch bounds one reclaim statement. Defaults to 100.
	Batch int
	// Clock drives the period. Defaults to the real clock.
	Clock clock.Clock
	// Runtime runs the loop. Defaults to rt.Real(Clock); the simulator
	// sets its own.
	Runtime rt.Runtime
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// OnPass, if set, is called after every pass with the runs it
	// reclaimed (tests use it as a signal instead of sleeping).
	OnPass func(reclaimed int, err error)
}

var _ startstop.Service = (*Reclaimer)(nil)

// Reclaimer returns runs whose lease expired on the store clock to
// available (or failed when their attempts are exhausted), every P, in
// bounded batches repeated until a batch comes back short — so thousands
// expiring at once are all reclaimed within one period. Every replica may
// run one: the store's SKIP LOCKED (Postgres) or single writer (SQLite)
// gives each expired run to exactly one of them, and each reclaim
// increments the fence, fencing the old holder out.
type Reclaimer struct {
	rs   driver.RunStore
	cfg  ReclaimerConfig
	life startstop.Lifecycle
}

// NewReclaimer returns a stopped Reclaimer.
func NewReclaimer(rs driver.RunStore, cfg ReclaimerConfig) *Reclaimer {
	cfg.Timing = cfg.Timing.WithDefaults(lease.RunDefaults())
	if cfg.Batch <= 0 {
		cfg.Batch = 100
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Runtime == nil {
		cfg.Runtime = rt.Real(cfg.Clock)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	r := &Reclaimer{rs: rs, cfg: cfg}
	r.life.Name = "reclaimer"
	r.life.RT = cfg.Runtime
	return r
}

// ReclaimOnce reclaims until a batch comes back short and returns how many
// runs it reclaimed.
func (r *Reclaimer) ReclaimOnce(ctx context.Context) (int, error) {
	total := 0
	for {
		res, err := r.rs.RunReclaim(ctx, &driver.RunReclaimParams{Limit: r.cfg.Batch})
		if err != nil {
			return total, err
		}
		total += len(res.Reclaimed)
		for _, run := range res.Reclaimed {
			r.cfg.Logger.Info("run reclaimed", "run", run.ID, "queue", run.Queue, "state", run.State,
				"fence", run.Fence, "reason", run.Reason, "class", lease.SyncCritical.String())
		}
		if len(res.Reclaimed) < r.cfg.Batch || ctx.Err() != nil {
			return total, nil
		}
	}
}

// Start runs the reclaim loop every P until Stop or ctx ends. It is
// idempotent; after Stop it returns startstop.ErrStopped.
func (r *Reclaimer) Start(ctx context.Context) error {
	return r.life.Start(ctx, func(ctx context.Context) error {
		r.life.Go("reclaim", func() {
			rt.Every(r.cfg.Runtime, r.cfg.Clock, ctx, r.cfg.Timing.Poll, func() {
				n, err := r.ReclaimOnce(ctx)
				if err != nil && ctx.Err() == nil {
					r.cfg.Logger.Warn("reclaim failed; retrying next period", "err", err)
				}
				if r.cfg.OnPass != nil {
					r.cfg.OnPass(n, err)
				}
			})
		})
		return nil
	})
}

// Stop stops the loop and waits for it until ctx ends; a pass in flight
// is cancelled (its work is one fenced transaction per batch, so nothing
// is half-applied, and another replica or the next start takes over).
func (r *Reclaimer) Stop(ctx context.Context) error { return r.life.Stop(ctx, nil) }

// Started is closed once the loop runs.
func (r *Reclaimer) Started() <-chan struct{} { return r.life.Started() }

// Stopped is closed once the loop has returned.
func (r *Reclaimer) Stopped() <-chan struct{} { return r.life.Stopped() }
