package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/doctor"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// renewCounter counts the renewal statements a worker sends, by path, and
// the synchronous ones per run.
type renewCounter struct {
	scheduler.Store
	sync, drains atomic.Int64
	maxDrain     atomic.Int64  // the most runs one drain carried since reset
	moved        chan struct{} // if not nil: a renewal of either path was sent
	mu           sync.Mutex
	perRun       map[int64]int64
}

func (s *renewCounter) RunRenew(ctx context.Context, p *driver.RunRenewParams) (*driver.Run, error) {
	s.sync.Add(1)
	s.mu.Lock()
	if s.perRun == nil {
		s.perRun = map[int64]int64{}
	}
	s.perRun[p.ID]++
	s.mu.Unlock()
	defer s.signal()
	return s.Store.RunRenew(ctx, p)
}

// syncPerRun is a copy of the synchronous renewals counted per run.
func (s *renewCounter) syncPerRun() map[int64]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[int64]int64, len(s.perRun))
	for id, n := range s.perRun {
		out[id] = n
	}
	return out
}

func (s *renewCounter) RunRenewMany(ctx context.Context, p *driver.RunRenewManyParams) (*driver.RunRenewManyResult, error) {
	s.drains.Add(1)
	for n := int64(len(p.Runs)); ; {
		m := s.maxDrain.Load()
		if n <= m || s.maxDrain.CompareAndSwap(m, n) {
			break
		}
	}
	defer s.signal()
	return s.Store.RunRenewMany(ctx, p)
}

// signal tells a waiter on moved that the counts may have moved (it never
// blocks: one pending signal covers any number of renewals).
func (s *renewCounter) signal() {
	if s.moved != nil {
		select {
		case s.moved <- struct{}{}:
		default:
		}
	}
}

// fastTiming is a valid run timing short enough for real-time tests.
var fastTiming = lease.Timing{Lease: 3 * time.Second, Renew: 150 * time.Millisecond, Drain: 100 * time.Millisecond,
	Stop: 1500 * time.Millisecond, Skew: 500 * time.Millisecond, Poll: 100 * time.Millisecond}

func TestModesSwitchAtRuntimeOnBothStores(t *testing.T) {
	t.Parallel()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			store, _ := sk.open(t, clock.Real())
			counter := &renewCounter{Store: store, moved: make(chan struct{}, 1)}
			const n = 20
			for range n {
				_, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
				require.NoError(t, err)
			}
			quiet := slog.New(slog.DiscardHandler)
			events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
			require.NoError(t, events.Start(context.Background()))
			defer events.Stop(context.Background())
			w, err := scheduler.NewWorker(counter, events, scheduler.WorkerConfig{Queues: map[string]int{"q": n},
				Timing: fastTiming, Logger: quiet})
			require.NoError(t, err)
			require.Equal(t, keeper.ModeWriteBehind, w.Mode(), "the default")
			release := make(chan struct{})
			var held sync.WaitGroup
			held.Add(n)
			w.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
				held.Done()
				select {
				case <-release:
				case <-ctx.Done():
					return context.Cause(ctx)
				}
				return r.Gate(ctx, 100*time.Millisecond) // the lease is still good
			})
			require.NoError(t, w.Start(ctx))
			held.Wait()

			// settle waits until a path the new mode no longer uses has
			// gone quiet: a renewal decided under the old mode just before
			// the switch may still reach the store after it when the box
			// is loaded (CI saw 10 late sync renewals after a switch back
			// to writebehind). It waits for the signal — the count stops
			// moving for 4 renewal periods — not for a guessed time; a
			// path that never stops keeps moving and fails the phase.
			settle := func(c *atomic.Int64) {
				last := c.Load()
				for range 50 {
					time.Sleep(4 * fastTiming.Renew)
					now := c.Load()
					if now == last {
						return
					}
					last = now
				}
			}
			// until waits until cond holds, checking it each time a renewal
			// was sent, failing after a minute: each phase lasts until the
			// counts it judges have moved (a dozen drains, three renewals
			// of every run), not for a guessed time a loaded box may not
			// keep up with.
			until := func(what string, cond func() bool) {
				limit := time.NewTimer(time.Minute)
				defer limit.Stop()
				for !cond() {
					select {
					case <-counter.moved:
					case <-limit.C:
						// A run that lost its lease stops renewing, so a
						// phase waiting on every run never ends: say so.
						st := w.Keeper().Stats()
						t.Fatalf("waited a minute for %s (keeper: %d leases lost, %d self-stops; sync renewals per run %v)",
							what, st.Lost, st.SelfStops, counter.syncPerRun())
					}
				}
			}
			// everyRun reports whether every run has sent at least k
			// synchronous renewals since per0.
			everyRun := func(per0 map[int64]int64, k int64) func() bool {
				return func() bool {
					per := counter.syncPerRun()
					if len(per) < n {
						return false
					}
					for id, c := range per {
						if c-per0[id] < k {
							return false
						}
					}
					return true
				}
			}
			// lateSyncs is the most synchronous renewals one run sent in the
			// window: in writebehind a run may still land the one it decided
			// under the old mode (its loop read the mode before the switch
			// and a loaded box delayed the call past settle: CI saw 5 at load
			// 15 under -race), never a second — a writebehind that kept
			// renewing synchronously would send one per T_renew, a dozen.
			var lateSyncs int64
			phase := func(m keeper.Mode) (syncs, drains int64) {
				require.NoError(t, w.SetMode(m))
				time.Sleep(fastTiming.Renew) // the switch takes effect at each run's next renewal
				switch m {
				case keeper.ModeWriteBehind:
					settle(&counter.sync)
				case keeper.ModeSync:
					settle(&counter.drains)
				}
				s0, d0, per0 := counter.sync.Load(), counter.drains.Load(), counter.syncPerRun()
				counter.maxDrain.Store(0)
				switch m {
				case keeper.ModeWriteBehind:
					until("a dozen drains", func() bool { return counter.drains.Load()-d0 >= 12 })
				case keeper.ModeSync:
					until("three sync renewals of every run", everyRun(per0, 3))
				case keeper.ModeDark:
					until("three sync renewals of every run and a drain", func() bool {
						return everyRun(per0, 3)() && counter.drains.Load() > d0
					})
				}
				lateSyncs = 0
				for id, n := range counter.syncPerRun() {
					lateSyncs = max(lateSyncs, n-per0[id])
				}
				return counter.sync.Load() - s0, counter.drains.Load() - d0
			}
			s, d := phase(keeper.ModeWriteBehind)
			require.LessOrEqual(t, lateSyncs, int64(1), "writebehind: no synchronous renewal but one decided before the switch (%d in all)", s)
			require.Greater(t, counter.maxDrain.Load(), int64(1), "writebehind: a drain carries the renewals of many runs, not one each")
			s, d = phase(keeper.ModeSync)
			require.GreaterOrEqual(t, s, int64(n*3), "sync: every run renews every T_renew")
			require.Zero(t, d, "sync: the drain issues nothing while every run renewed three times")
			s, d = phase(keeper.ModeDark)
			require.GreaterOrEqual(t, s, int64(n*3), "dark: the sync writes stay")
			require.Positive(t, d, "dark: and the drain runs beside them")
			s, d = phase(keeper.ModeWriteBehind)
			require.LessOrEqual(t, lateSyncs, int64(1), "back to writebehind: no synchronous renewal but one decided before the switch (%d in all)", s)
			require.Positive(t, d)
			require.Greater(t, counter.maxDrain.Load(), int64(1), "back to writebehind: drains coalesce again")
			st := w.Keeper().Stats()
			require.Zero(t, st.Lost)
			require.Zero(t, st.SelfStops)

			close(release)
			require.NoError(t, w.Stop(ctx))
			for id := int64(1); id <= n; id++ {
				r, err := store.RunGet(ctx, &driver.RunGetParams{ID: id})
				require.NoError(t, err)
				require.Equal(t, runs.StateCompleted, r.State, "run %d kept its lease through every switch", id)
			}
		})
	}
}

// steppingClock is a store clock that jumps forward by step after its
// first calls: an NTP step, or a failover to a host whose clock is ahead.
type steppingClock struct {
	clock.Clock
	calls atomic.Int64
	after int64
	step  time.Duration
}

func (c *steppingClock) Now() time.Time {
	if c.calls.Add(1) > c.after {
		return c.Clock.Now().Add(c.step)
	}
	return c.Clock.Now()
}

func TestWriteBehindStartupRefusesAStoreClockStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	step := &steppingClock{Clock: clock.Real(), after: 5, step: 20 * time.Second}
	store, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db"), Clock: step})
	require.NoError(t, err)
	defer store.Close()
	_, err = store.Migrate(ctx)
	require.NoError(t, err)
	quiet := slog.New(slog.DiscardHandler)
	events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
	newWorker := func(m keeper.Mode) *scheduler.Worker {
		w, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Queues: map[string]int{"q": 1}, Mode: m, Logger: quiet})
		require.NoError(t, err)
		w.Handle("q", func(context.Context, *scheduler.Run) error { return nil })
		return w
	}
	step.calls.Store(0)
	err = newWorker(keeper.ModeWriteBehind).Start(ctx)
	require.ErrorIs(t, err, doctor.ErrClockUnsafe)
	require.ErrorContains(t, err, "step of +20s")
	require.ErrorContains(t, err, "> S 15s")

	w := newWorker(keeper.ModeSync) // sync does not rely on the bound
	require.NoError(t, w.Start(ctx))
	require.NoError(t, w.Stop(ctx))
}

// failingDrains is a store whose write-behind drains all fail (a broken
// path to the database for that one statement) while every other call
// works: the worker cannot confirm its leases but can still write.
type failingDrains struct{ scheduler.Store }

func (failingDrains) RunRenewMany(context.Context, *driver.RunRenewManyParams) (*driver.RunRenewManyResult, error) {
	return nil, errors.New("drain path down")
}

// TestSelfStopRecordsItsReason: drains that keep failing never fail the
// run by themselves; the worker's durable lag reaches D_stop, it stops the
// run itself, and — the store being reachable — records why with the
// failed attempt, which is retried.
func TestSelfStopRecordsItsReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := storeKinds[0].open(t, clock.Real())
	enq, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", MaxAttempts: 5}}})
	require.NoError(t, err)
	quiet := slog.New(slog.DiscardHandler)
	events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
	require.NoError(t, events.Start(context.Background()))
	defer events.Stop(context.Background())
	w, err := scheduler.NewWorker(failingDrains{store}, events, scheduler.WorkerConfig{Queues: map[string]int{"q": 1},
		Timing: fastTiming, Logger: quiet, Backoff: runs.Backoff{Base: time.Hour, Max: time.Hour}})
	require.NoError(t, err)
	stopped := make(chan error, 1)
	started := time.Now()
	w.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return ctx.Err()
	})
	require.NoError(t, w.Start(ctx))
	defer w.Stop(ctx)
	var cause error
	select {
	case cause = <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("no self-stop")
	}
	elapsed := time.Since(started)
	var le *keeper.LostError
	require.ErrorAs(t, cause, &le)
	require.True(t, le.SelfStop)
	require.GreaterOrEqual(t, elapsed, fastTiming.Stop, "not before D_stop")
	require.Eventually(t, func() bool {
		r, err := store.RunGet(ctx, &driver.RunGetParams{ID: enq[0].Run.ID})
		return err == nil && r.State == runs.StateAvailable && strings.Contains(r.Reason, "self-stopped")
	}, 5*time.Second, 10*time.Millisecond, "the failed attempt records the self-stop")
	r, err := store.RunGet(ctx, &driver.RunGetParams{ID: enq[0].Run.ID})
	require.NoError(t, err)
	require.Equal(t, 1, r.Attempt)
	st := w.Keeper().Stats()
	require.Equal(t, uint64(1), st.SelfStops)
	require.Positive(t, st.FlushErrors, "the drains were tried, and retried")
	require.Zero(t, st.Lost)
}
