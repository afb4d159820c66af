package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leasehold/leasehold/driver"
)

// poolCollector exports a store's connection pools (driver.PoolReporter:
// Postgres's reserved critical pool and its general pool) — the figures
// `leasehold doctor` prints, read at scrape time, so a starved critical
// pool shows on /metrics before writes start failing.
type poolCollector struct {
	r                                   driver.PoolReporter
	max, open, idle, inUse              *prometheus.Desc
	acquires, waited, cancelled, waitNS *prometheus.Desc
}

func newPoolCollector(r driver.PoolReporter) *poolCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("leasehold_pool_"+name, help, []string{"pool"}, nil)
	}
	return &poolCollector{r: r,
		max: d("max_conns", "Configured size of the pool."), open: d("open_conns", "Connections open."),
		idle: d("idle_conns", "Connections open and idle."), inUse: d("in_use_conns", "Connections in use."),
		acquires: d("acquires_total", "Connections handed out."), waited: d("acquires_waited_total", "Acquires that found no idle connection."),
		cancelled: d("acquires_cancelled_total", "Acquires given up (timeout or caller)."),
		waitNS:    d("acquire_wait_seconds_total", "Time spent acquiring connections.")}
}

// Describe implements prometheus.Collector.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.max, c.open, c.idle, c.inUse, c.acquires, c.waited, c.cancelled, c.waitNS} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, p := range c.r.PoolStats() {
		g := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, p.Name)
		}
		n := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, p.Name)
		}
		g(c.max, float64(p.Max))
		g(c.open, float64(p.Open))
		g(c.idle, float64(p.Idle))
		g(c.inUse, float64(p.InUse))
		n(c.acquires, float64(p.Acquires))
		n(c.waited, float64(p.Waited))
		n(c.cancelled, float64(p.Cancelled))
		n(c.waitNS, p.AcquireWaitTotal.Seconds())
	}
}
