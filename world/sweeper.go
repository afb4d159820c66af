package world

import (
	"context"
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
// worlds it swept: SweepExpired (sweep.go) in batches of the sweeper's
// size, each swept world logged.
func (s *Sweeper) SweepOnce(ctx context.Context) (int, error) {
	rep, err := SweepExpired(ctx, s.d, s.batch)
	for _, w := range rep.Swept {
		s.log.Info("lease expired: revoked and granted to home", "world", w.World,
			"expired_at", w.ExpiredAt, "swept_at", w.StoreTimeAt, "new_epoch", w.Granted.Epoch,
			"class", lease.SyncCritical.String())
	}
	return len(rep.Swept), err
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
