package world

import (
	"context"
	"log/slog"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/startstop"
	"github.com/leasehold/leasehold/lease"
)

var _ startstop.Service = (*Sweeper)(nil)

// Sweeper runs the expiry sweep every P (lease.Timing.Poll): it repeats
// bounded batches until no held lease is expired, so thousands expiring at
// once are all swept within one period. Every replica may run one; the
// store's conditional writes let exactly one sweep each world.
type Sweeper struct {
	d      driver.Driver
	clock  clock.Clock
	timing lease.Timing
	log    *slog.Logger
	batch  int
	rt     rt.Runtime
	onPass func(*SweepReport, error)
	life   startstop.Lifecycle
}

// SetRuntime makes the loop run on r (the simulator's) instead of the
// real runtime, and calls onPass, if set, after every pass with its
// report. Call before Start.
func (s *Sweeper) SetRuntime(r rt.Runtime, onPass func(*SweepReport, error)) {
	s.rt, s.onPass = r, onPass
	s.life.RT = r
}

// NewSweeper returns a stopped Sweeper.
func NewSweeper(d driver.Driver, c clock.Clock, t lease.Timing, log *slog.Logger) *Sweeper {
	if log == nil {
		log = slog.Default()
	}
	s := &Sweeper{d: d, clock: c, timing: t, log: log, batch: 100, rt: rt.Real(c)}
	s.life.Name = "sweeper"
	return s
}

// SweepOnce sweeps until no held lease is expired and returns how many
// worlds it swept: SweepExpired (sweep.go) in batches of the sweeper's
// size, each swept world logged.
func (s *Sweeper) SweepOnce(ctx context.Context) (int, error) {
	rep, err := SweepExpired(ctx, s.d, s.batch)
	if s.onPass != nil {
		s.onPass(rep, err)
	}
	for _, w := range rep.Swept {
		s.log.Info("lease expired: revoked and granted to a home replica", "world", w.World, "granted_to", w.Granted.Holder,
			"expired_at", w.ExpiredAt, "swept_at", w.StoreTimeAt, "new_epoch", w.Granted.Epoch,
			"class", lease.SyncCritical.String())
	}
	return len(rep.Swept), err
}

// Start runs the sweep loop every P until Stop or ctx ends. It is
// idempotent; after Stop it returns startstop.ErrStopped.
func (s *Sweeper) Start(ctx context.Context) error {
	return s.life.Start(ctx, func(ctx context.Context) error {
		s.life.Go("sweep", func() {
			rt.Every(s.rt, s.clock, ctx, s.timing.Poll, func() {
				if _, err := s.SweepOnce(ctx); err != nil && ctx.Err() == nil {
					s.log.Warn("expiry sweep failed; retrying next period", "err", err)
				}
			})
		})
		return nil
	})
}

// Stop stops the loop and waits for it until ctx ends; a sweep in flight
// is cancelled (each world's sweep is one conditional write, so nothing is
// half-applied).
func (s *Sweeper) Stop(ctx context.Context) error { return s.life.Stop(ctx, nil) }

// Started is closed once the loop runs.
func (s *Sweeper) Started() <-chan struct{} { return s.life.Started() }

// Stopped is closed once the loop has returned.
func (s *Sweeper) Stopped() <-chan struct{} { return s.life.Stopped() }
