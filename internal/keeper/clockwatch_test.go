package keeper_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/lease"
)

// records is a slog handler keeping every record's message and attributes.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	r.mu.Lock()
	r.msgs = append(r.msgs, b.String())
	r.mu.Unlock()
	return nil
}

func (r *records) find(prefix string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.msgs {
		if strings.HasPrefix(m, prefix) {
			out = append(out, m)
		}
	}
	return out
}

func TestAStoreClockStepShrinksTheRunwayUntilBackWithinBounds(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(start)
	s := newStore(c)
	tm := lease.RunDefaults() // T_lease 90s, S 15s, D_stop 45s
	logs := &records{}
	k, err := keeper.New(keeper.Config{Timing: tm, Flusher: s, Clock: c, Mode: keeper.ModeWriteBehind, Logger: slog.New(logs)})
	require.NoError(t, err)
	b := &bundle{clock: c, store: s, k: k, t: tm}
	e, _ := b.hold(t, 1, 1)
	storeAt := func() time.Time { return c.Now().Add(-time.Hour) } // any offset: only its change counts

	probe := func(storeShift time.Duration) {
		sent := c.Now()
		c.Advance(time.Millisecond) // the round trip
		k.ObserveStore(sent, c.Now(), storeAt().Add(-500*time.Microsecond+storeShift))
	}
	probe(0)
	c.Advance(time.Second)
	probe(0)
	require.Zero(t, k.ClockCut())
	require.Equal(t, tm.Lease-tm.Skew-time.Second-2*time.Millisecond, runwayOf(e))
	require.NoError(t, e.Gate(context.Background(), 38*time.Second), "before the step an effect of 38s passes")

	// The store clock steps 50s forward: leases confirmed before it may
	// expire 50s early on the store, 35s more than S covers.
	c.Advance(time.Second)
	probe(50 * time.Second)
	cut := k.ClockCut()
	require.GreaterOrEqual(t, cut, 35*time.Second)
	require.LessOrEqual(t, cut, 35*time.Second+2*time.Millisecond, "the cut is the move beyond S, widened only by the probes' bounds")
	logged := logs.find("store clock moved beyond S")
	require.Len(t, logged, 1)
	require.Contains(t, logged[0], "what=step")
	require.Contains(t, logged[0], "moved=49.999s", "50s less the probes' bounds: what is certain")
	require.Contains(t, logged[0], "s=15s")
	require.Less(t, runwayOf(e), tm.Lease-tm.Skew-cut-2*time.Second+time.Millisecond)

	// The gate now trusts 35s less: the same 38s effect is refused (after
	// its one synchronous flush), and the holder stops.
	err = e.Gate(context.Background(), 38*time.Second)
	require.ErrorIs(t, err, lease.ErrLeaseRunway)

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(k.Collector()))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP leasehold_store_clock_alarms_total Times the store clock was seen moving beyond S within one term (kind step or drift).
# TYPE leasehold_store_clock_alarms_total counter
leasehold_store_clock_alarms_total{kind="runs",what="drift"} 0
leasehold_store_clock_alarms_total{kind="runs",what="step"} 1
# HELP leasehold_store_clock_probes_total Round trips (claims, renewals, drains) that fed the runtime store-clock watch.
# TYPE leasehold_store_clock_probes_total counter
leasehold_store_clock_probes_total{kind="runs"} 3
`), "leasehold_store_clock_alarms_total", "leasehold_store_clock_probes_total"))
	require.InDelta(t, cut.Seconds(), gaugeValue(t, reg, "leasehold_store_clock_runway_cut_seconds"), 1e-9)

	// A holder claimed after the step keeps the cut until the evidence
	// from before it is one term old; the watchdog then clears it with no
	// further probe.
	e2, _ := b.hold(t, 2, 1)
	require.Equal(t, tm.Lease-tm.Skew-cut, runwayOf(e2))
	c.Set(start.Add(time.Second + 2*time.Millisecond + tm.Lease - time.Millisecond))
	k.WatchOnce()
	require.Equal(t, cut, k.ClockCut())
	c.Advance(time.Millisecond)
	k.WatchOnce()
	require.Zero(t, k.ClockCut())
	require.Len(t, logs.find("store clock back within bounds"), 1)
	require.Zero(t, gaugeValue(t, reg, "leasehold_store_clock_runway_cut_seconds"))
}

func TestAStepLargerThanTheTermStopsEveryHolder(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	e, ctx := b.hold(t, 1, 1)
	sent := b.clock.Now()
	b.k.ObserveStore(sent, sent, start)
	b.clock.Advance(time.Second)
	b.k.ObserveStore(b.clock.Now(), b.clock.Now(), start.Add(time.Second+2*time.Minute))
	require.Zero(t, runwayOf(e))
	b.k.WatchOnce()
	var le *keeper.LostError
	require.ErrorAs(t, context.Cause(ctx), &le)
	require.True(t, le.SelfStop, "nothing of the runway is left to trust: the holder stops at once")
}

func TestModeSwitchesAreCountedAndTheModeShown(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeDark)
	for _, m := range []keeper.Mode{keeper.ModeWriteBehind, keeper.ModeSync, keeper.ModeWriteBehind, keeper.ModeWriteBehind} {
		require.NoError(t, b.k.SetMode(m))
	}
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(b.k.Collector()))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP leasehold_keeper_mode The heartbeat mode in force: 1 for it, 0 for the others.
# TYPE leasehold_keeper_mode gauge
leasehold_keeper_mode{kind="runs",mode="dark"} 0
leasehold_keeper_mode{kind="runs",mode="sync"} 0
leasehold_keeper_mode{kind="runs",mode="writebehind"} 1
# HELP leasehold_keeper_mode_switches_total Heartbeat mode switches, by from and to.
# TYPE leasehold_keeper_mode_switches_total counter
leasehold_keeper_mode_switches_total{from="dark",kind="runs",to="sync"} 0
leasehold_keeper_mode_switches_total{from="dark",kind="runs",to="writebehind"} 1
leasehold_keeper_mode_switches_total{from="sync",kind="runs",to="dark"} 0
leasehold_keeper_mode_switches_total{from="sync",kind="runs",to="writebehind"} 1
leasehold_keeper_mode_switches_total{from="writebehind",kind="runs",to="dark"} 0
leasehold_keeper_mode_switches_total{from="writebehind",kind="runs",to="sync"} 1
`), "leasehold_keeper_mode", "leasehold_keeper_mode_switches_total"))
}

// gaugeValue reads the one series of a gauge family.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			require.Len(t, mf.GetMetric(), 1)
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// runwayOf is the entry's runway alone.
func runwayOf(e *keeper.Entry) time.Duration {
	r, _ := e.Runway()
	return r
}
