package keeper

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// stats are the keeper's decision counters: plain atomics on the hot
// paths, exported to Prometheus by the keeper's Collector.
type stats struct {
	flushes, flushErrors, flushedRows           atomic.Uint64
	lost, selfStops                             atomic.Uint64
	gatePass, gateFlushPass, gateRefuse         atomic.Uint64
	darkGateDiffs, darkStopDiffs, darkLostDiffs atomic.Uint64
	maxLag                                      atomic.Int64        // ns
	modeSwitches                                [3][3]atomic.Uint64 // [from][to]
	clockProbes, clockSteps, clockDrifts        atomic.Uint64
	clockClears                                 atomic.Uint64
}

// observeLag records the durable lag an entry had reached when a renewal
// of it was confirmed.
func (k *Keeper) observeLag(lag time.Duration) {
	k.metrics.lag.Observe(lag.Seconds())
	for {
		cur := k.stats.maxLag.Load()
		if int64(lag) <= cur || k.stats.maxLag.CompareAndSwap(cur, int64(lag)) {
			return
		}
	}
}

// Stats is a snapshot of the keeper's counters.
type Stats struct {
	Flushes       uint64 // drains that reached the store and were answered
	FlushErrors   uint64 // drains that failed (retried with backoff)
	FlushedRows   uint64 // leases renewed by drains
	Lost          uint64 // leases found lost by a flush, a refused renewal or a refused final write
	SelfStops     uint64 // holders stopped at D_stop
	GatePass      uint64 // gate passed locally, no store call
	GateFlushPass uint64 // gate passed after one synchronous flush
	GateRefuse    uint64 // gate refused (ErrLeaseRunway); holder stopped
	DarkGateDiffs uint64 // dark mode: gate decisions write-behind would have made otherwise
	DarkStopDiffs uint64 // dark mode: self-stop decisions that would have differed
	DarkLostDiffs uint64 // dark mode: leases the drain found lost before the sync path
	// MaxLag is the largest durable lag a lease had reached when a renewal
	// of it was confirmed: how close upkeep came to D_stop.
	MaxLag time.Duration
}

// Stats returns a snapshot of the counters.
func (k *Keeper) Stats() Stats {
	s := &k.stats
	gatePass := s.gatePass.Load()
	k.mu.Lock()
	for _, e := range k.entries {
		gatePass += e.gatePasses.Load()
	}
	k.mu.Unlock()
	return Stats{
		Flushes: s.flushes.Load(), FlushErrors: s.flushErrors.Load(), FlushedRows: s.flushedRows.Load(),
		Lost: s.lost.Load(), SelfStops: s.selfStops.Load(),
		GatePass: gatePass, GateFlushPass: s.gateFlushPass.Load(), GateRefuse: s.gateRefuse.Load(),
		DarkGateDiffs: s.darkGateDiffs.Load(), DarkStopDiffs: s.darkStopDiffs.Load(), DarkLostDiffs: s.darkLostDiffs.Load(),
		MaxLag: time.Duration(s.maxLag.Load()),
	}
}

// metrics holds the histograms (observed off the gate's hot path) and
// describes the counters.
type metrics struct {
	k            *Keeper
	rowsPerFlush prometheus.Histogram
	lag          prometheus.Histogram
	descs        map[string]*prometheus.Desc
}

func newMetrics(k *Keeper) *metrics {
	labels := prometheus.Labels{"kind": k.cfg.Kind}
	m := &metrics{k: k,
		rowsPerFlush: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "leasehold_keeper_flush_rows", Help: "Leases carried by one drain statement.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(1, 4, 9)}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "leasehold_keeper_durable_lag_seconds", Help: "Durable lag of a lease when a drain confirmed its renewal.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.05, 2, 12)}),
		descs: map[string]*prometheus.Desc{},
	}
	for name, help := range map[string]string{
		"leasehold_keeper_flushes_total":           "Drains answered by the store (result=ok) or failed (result=error).",
		"leasehold_keeper_flushed_rows_total":      "Leases renewed by drains.",
		"leasehold_keeper_leases_lost_total":       "Leases found lost by a flush, a refused synchronous renewal or a refused final write.",
		"leasehold_keeper_self_stops_total":        "Holders stopped because their durable lag reached D_stop.",
		"leasehold_gate_decisions_total":           "Side-effect gate decisions: pass (local), flush_pass (after one synchronous flush), refuse.",
		"leasehold_keeper_dark_diffs_total":        "Dark mode: decisions (gate, stop, lost) write-behind would have made differently.",
		"leasehold_keeper_mode":                    "The heartbeat mode in force: 1 for it, 0 for the others.",
		"leasehold_keeper_mode_switches_total":     "Heartbeat mode switches, by from and to.",
		"leasehold_store_clock_probes_total":       "Round trips (claims, renewals, drains) that fed the runtime store-clock watch.",
		"leasehold_store_clock_alarms_total":       "Times the store clock was seen moving beyond S within one term (kind step or drift).",
		"leasehold_store_clock_clears_total":       "Times the store clock was back within bounds after an alarm.",
		"leasehold_store_clock_runway_cut_seconds": "How much the runway is shortened beyond S now because of a store-clock alarm.",
	} {
		var vl []string
		switch name {
		case "leasehold_keeper_flushes_total":
			vl = []string{"result"}
		case "leasehold_gate_decisions_total":
			vl = []string{"outcome"}
		case "leasehold_keeper_dark_diffs_total":
			vl = []string{"decision"}
		case "leasehold_keeper_mode":
			vl = []string{"mode"}
		case "leasehold_keeper_mode_switches_total":
			vl = []string{"from", "to"}
		case "leasehold_store_clock_alarms_total":
			vl = []string{"what"}
		}
		m.descs[name] = prometheus.NewDesc(name, help, vl, labels)
	}
	return m
}

// Collector returns the keeper's Prometheus collector (register it once).
func (k *Keeper) Collector() prometheus.Collector { return k.metrics }

// Describe implements prometheus.Collector.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range m.descs {
		ch <- d
	}
	m.rowsPerFlush.Describe(ch)
	m.lag.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	s := m.k.Stats()
	c := func(name string, v uint64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(m.descs[name], prometheus.CounterValue, float64(v), lv...)
	}
	c("leasehold_keeper_flushes_total", s.Flushes, "ok")
	c("leasehold_keeper_flushes_total", s.FlushErrors, "error")
	c("leasehold_keeper_flushed_rows_total", s.FlushedRows)
	c("leasehold_keeper_leases_lost_total", s.Lost)
	c("leasehold_keeper_self_stops_total", s.SelfStops)
	c("leasehold_gate_decisions_total", s.GatePass, "pass")
	c("leasehold_gate_decisions_total", s.GateFlushPass, "flush_pass")
	c("leasehold_gate_decisions_total", s.GateRefuse, "refuse")
	c("leasehold_keeper_dark_diffs_total", s.DarkGateDiffs, "gate")
	c("leasehold_keeper_dark_diffs_total", s.DarkStopDiffs, "stop")
	c("leasehold_keeper_dark_diffs_total", s.DarkLostDiffs, "lost")
	mode := m.k.Mode()
	for _, md := range []Mode{ModeSync, ModeDark, ModeWriteBehind} {
		v := 0.0
		if md == mode {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(m.descs["leasehold_keeper_mode"], prometheus.GaugeValue, v, md.String())
		for _, to := range []Mode{ModeSync, ModeDark, ModeWriteBehind} {
			if to != md {
				c("leasehold_keeper_mode_switches_total", m.k.stats.modeSwitches[md][to].Load(), md.String(), to.String())
			}
		}
	}
	st := &m.k.stats
	c("leasehold_store_clock_probes_total", st.clockProbes.Load())
	c("leasehold_store_clock_alarms_total", st.clockSteps.Load(), "step")
	c("leasehold_store_clock_alarms_total", st.clockDrifts.Load(), "drift")
	c("leasehold_store_clock_clears_total", st.clockClears.Load())
	ch <- prometheus.MustNewConstMetric(m.descs["leasehold_store_clock_runway_cut_seconds"], prometheus.GaugeValue, m.k.ClockCut().Seconds())
	m.rowsPerFlush.Collect(ch)
	m.lag.Collect(ch)
}
