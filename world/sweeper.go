package world

import (
	"context"
	"errors"
	"log/slog"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
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
	life   startstop.Lifecycle
}

// NewSweeper returns a stopped Sweeper.
func NewSweeper(d driver.Driver, c clock.Clock, t lease.Timing, log *slog.Logger) *Sweeper {
	if log == nil {
		log = slog.Default()
	}
	s := &Sweeper{d: d, clock: c, timing: t, log: log, batch: 100}
	s.life.Name = "sweeper"
	return s
}

// SweepOnce sweeps until no held lease is expired and returns how many
// worlds it swept. It repeats bounded batches while the scan comes back full
// — not while this sweeper swept a full batch: with several replicas
// sweeping, each takes only part of every batch — and stops when a batch
// made no progress (every candidate failed), so a failing world cannot spin
// it; failures are retried next period.
func (s *Sweeper) SweepOnce(ctx context.Context) (int, error) {
	total := 0
	var errs []error
	for {
		res, err := s.d.LeaseSweepExpired(ctx, &driver.LeaseSweepParams{Limit: s.batch})
		if err != nil {
			errs = append(errs, err)
		}
		if res == nil {
			return total, errors.Join(errs...)
		}
		total += len(res.Swept)
		for _, w := range res.Swept {
			s.log.Info("lease expired: revoked and granted to home", "world", w.World,
				"expired_at", w.ExpiredAt, "swept_at", w.StoreTimeAt, "new_epoch", w.Granted.Epoch,
				"class", lease.SyncCritical.String())
		}
		if res.Candidates < s.batch || len(res.Swept) == 0 && err != nil || ctx.Err() != nil {
			return total, errors.Join(errs...)
		}
	}
}

// Start runs the sweep loop every P until Stop or ctx ends. It is
// idempotent; after Stop it returns startstop.ErrStopped.
func (s *Sweeper) Start(ctx context.Context) error {
	return s.life.Start(ctx, func(ctx context.Context) error {
		ticker, tick := s.clock.NewTicker(s.timing.Poll)
		s.life.Go("sweep", func() {
			defer ticker.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick:
					if _, err := s.SweepOnce(ctx); err != nil && ctx.Err() == nil {
						s.log.Warn("expiry sweep failed; retrying next period", "err", err)
					}
				}
			}
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
