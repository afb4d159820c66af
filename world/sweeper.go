package world

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
)

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

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewSweeper returns a stopped Sweeper.
func NewSweeper(d driver.Driver, c clock.Clock, t lease.Timing, log *slog.Logger) *Sweeper {
	if log == nil {
		log = slog.Default()
	}
	return &Sweeper{d: d, clock: c, timing: t, log: log, batch: 100}
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

// Start runs the sweep loop until Stop or ctx ends.
func (s *Sweeper) Start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	ticker, tick := s.clock.NewTicker(s.timing.Poll)
	go func() {
		defer close(s.done)
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
	}()
}

// Stop stops the loop and waits for it.
func (s *Sweeper) Stop() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel = nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
