package keeper_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/keeper"
)

func TestCollectorReportsEveryDecision(t *testing.T) {
	t.Parallel()
	b := setup(t, keeper.ModeWriteBehind)
	e, _ := b.hold(t, 1, 1)
	bg := context.Background()
	require.NoError(t, e.Gate(bg, time.Second))
	e.Renew()
	b.clock.Advance(2 * time.Second)
	require.NoError(t, b.k.DrainOnce(bg))
	b.store.set(func(s *store) { s.fail = errors.New("down") })
	e.Renew()
	require.Error(t, b.k.DrainOnce(bg))
	b.clock.Advance(b.t.Stop)
	b.k.WatchOnce()

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(b.k.Collector()))
	want := `
# HELP leasehold_gate_decisions_total Side-effect gate decisions: pass (local), flush_pass (after one synchronous flush), refuse.
# TYPE leasehold_gate_decisions_total counter
leasehold_gate_decisions_total{kind="runs",outcome="flush_pass"} 0
leasehold_gate_decisions_total{kind="runs",outcome="pass"} 1
leasehold_gate_decisions_total{kind="runs",outcome="refuse"} 0
# HELP leasehold_keeper_flushes_total Drains answered by the store (result=ok) or failed (result=error).
# TYPE leasehold_keeper_flushes_total counter
leasehold_keeper_flushes_total{kind="runs",result="error"} 1
leasehold_keeper_flushes_total{kind="runs",result="ok"} 1
# HELP leasehold_keeper_self_stops_total Holders stopped because their durable lag reached D_stop.
# TYPE leasehold_keeper_self_stops_total counter
leasehold_keeper_self_stops_total{kind="runs"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want),
		"leasehold_gate_decisions_total", "leasehold_keeper_flushes_total", "leasehold_keeper_self_stops_total"))
	n, err := testutil.GatherAndCount(reg, "leasehold_keeper_durable_lag_seconds", "leasehold_keeper_flush_rows")
	require.NoError(t, err)
	require.Equal(t, 2, n, "the lag and rows-per-flush histograms")
}
