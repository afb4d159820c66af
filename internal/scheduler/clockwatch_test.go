package scheduler_test

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// steppedClock is the real clock plus an offset the test steps at runtime:
// injected as the store clock, it is a store whose clock an NTP step or a
// failover moves mid-run. On SQLite it is the driver's Clock; on Postgres
// the driver's StoreClock, which every statement takes as its now
// (coalesce($1, clock_timestamp())) — the same SQL, the time moved.
type steppedClock struct {
	clock.Clock
	off atomic.Int64
}

func (c *steppedClock) Now() time.Time { return c.Clock.Now().Add(time.Duration(c.off.Load())) }

func TestAStoreClockSteppedAtRuntimeIsDetectedLoggedAndShrinksTheRunway(t *testing.T) {
	t.Parallel()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			sc := &steppedClock{Clock: clock.Real()}
			store, _ := sk.open(t, sc)
			events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, events.Start(ctx))
			defer events.Stop(ctx)
			moved, back := make(chan string, 1), make(chan string, 1)
			log := slog.New(scheduler.LogSignals{"store clock moved": moved, "store clock back": back})
			w, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Queues: map[string]int{"q": 1},
				Timing: fastTiming, Logger: log}) // writebehind: the drain is the evidence
			require.NoError(t, err)

			// fastTiming: T_lease 3s, S 500ms, D_stop 1.5s, margin 100ms.
			// An effect of 1.1s needs 1.2s: it passes on a steady clock
			// (D_stop − lag); after a 2s step the keeper trusts 1.5s less
			// runway (D_stop capped at T_lease − S − 1.5s = 1s) and refuses.
			const effect = 1100 * time.Millisecond
			gated, stepped := make(chan error, 1), make(chan struct{})
			after := make(chan error, 1)
			w.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
				if r.Attempt > 1 {
					return nil // the retry after the refusal below
				}
				gated <- r.Gate(ctx, effect)
				<-stepped
				err := r.Gate(ctx, effect)
				after <- err
				return err
			})
			_, err = store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
			require.NoError(t, err)
			require.NoError(t, w.Start(ctx))
			defer w.Stop(ctx)
			require.NoError(t, <-gated, "a steady clock: the effect passes")
			require.Zero(t, w.Keeper().ClockCut())

			sc.off.Store(int64(2 * time.Second)) // the store clock steps 2s forward
			var line string
			select {
			case line = <-moved:
			case <-time.After(20 * time.Second): // a bound, not a guess: the next drain is due in T_drain
				t.Fatal("the watch did not notice a 2s step")
			}
			t.Logf("%s: %s", sk.name, line)
			require.Contains(t, line, "what=step")
			require.Contains(t, line, "s=500ms")
			cut := w.Keeper().ClockCut()
			require.GreaterOrEqual(t, cut, 1500*time.Millisecond, "the move beyond S: %s", line)
			require.Less(t, cut, 2500*time.Millisecond, "widened only by the probes' round trips: %s", line)

			reg := prometheus.NewPedanticRegistry()
			require.NoError(t, reg.Register(w.Keeper().Collector()))
			require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP leasehold_store_clock_alarms_total Times the store clock was seen moving beyond S within one term (kind step or drift).
# TYPE leasehold_store_clock_alarms_total counter
leasehold_store_clock_alarms_total{kind="runs",what="drift"} 0
leasehold_store_clock_alarms_total{kind="runs",what="step"} 1
`), "leasehold_store_clock_alarms_total"))

			close(stepped)
			require.ErrorIs(t, <-after, lease.ErrLeaseRunway, "the gate trusts the shortened runway")
			require.Zero(t, w.Keeper().Stats().Lost, "no lease was lost: the store still held it")

			// No further step: once the evidence from before it is one
			// term old, the watch clears and the runway is whole again.
			select {
			case <-back:
			case <-time.After(20 * time.Second):
				t.Fatal("the watch never cleared")
			}
			require.Zero(t, w.Keeper().ClockCut())
		})
	}
}
