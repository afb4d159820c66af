package server

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/clockwatch"
	"github.com/leasehold/leasehold/lease"
)

// storeClock is the server's runtime store-clock watch, for the leases it
// vouches for to remote runners (docs/design/fencing.md §6): every claim
// and renewal it sends learns the store's time (expires_at − T_lease); a
// move of the store clock beyond S within one term is logged and counted
// (leasehold_server_store_clock_*), and while it is in force the runway
// the server vouches for — runway_ms, and the remote effect gate — is
// shortened by the cut. The in-process workers' keepers run their own.
type storeClock struct {
	s      *Server
	base   time.Time
	watch  *clockwatch.Watch
	alarms *prometheus.CounterVec
	clears prometheus.Counter
	cut    prometheus.GaugeFunc
	// steps, drifts and cleared are the alarm and clear counts again, for
	// the dashboard's health page (a Prometheus counter is not read back).
	steps, drifts, cleared atomic.Int64
}

func newStoreClock(s *Server) *storeClock {
	c := &storeClock{s: s, base: s.cfg.Clock.Now(), watch: clockwatch.New(s.cfg.Timing),
		alarms: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leasehold_server_store_clock_alarms_total",
			Help: "Times the store clock was seen moving beyond S within one term by the server's claims and renewals (what: step or drift)."}, []string{"what"}),
		clears: prometheus.NewCounter(prometheus.CounterOpts{Name: "leasehold_server_store_clock_clears_total",
			Help: "Times the store clock was back within bounds after an alarm (server)."}),
	}
	c.cut = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "leasehold_server_store_clock_runway_cut_seconds",
		Help: "How much the runway the server vouches for is shortened beyond S now because of a store-clock alarm."},
		func() float64 { return c.excess(c.s.cfg.Clock.Now()).Seconds() })
	c.alarms.WithLabelValues(string(clockwatch.KindStep))
	c.alarms.WithLabelValues(string(clockwatch.KindDrift))
	return c
}

func (c *storeClock) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.alarms, c.clears, c.cut}
}

// observe takes a claim's or renewal's round trip: sent and recv on the
// server's clock, r the row the store wrote (its expires_at is store now
// + T_lease).
func (c *storeClock) observe(sent, recv time.Time, r *driver.Run) {
	if r == nil || r.ExpiresAt.IsZero() {
		return
	}
	c.observeStore(sent, recv, r.ExpiresAt.Add(-c.s.cfg.Timing.Lease))
}

// observeStore takes one round trip that read the store's clock (store):
// a claim, a synchronous renewal, or the remote keeper's drain.
func (c *storeClock) observeStore(sent, recv, store time.Time) {
	if store.IsZero() {
		return
	}
	v := c.watch.Observe(clockwatch.Probe{Sent: sent.Sub(c.base), Recv: recv.Sub(c.base), Store: store})
	log := c.s.cfg.Logger
	if v.Cleared {
		c.clears.Inc()
		c.cleared.Add(1)
		log.Info("store clock back within bounds: the runway vouched for is no longer shortened", "s", c.s.cfg.Timing.Skew)
	}
	if v.Raised {
		c.alarms.WithLabelValues(string(v.Kind)).Inc()
		if v.Kind == clockwatch.KindStep {
			c.steps.Add(1)
		} else {
			c.drifts.Add(1)
		}
		log.Warn("store clock moved beyond S within one term: the runway vouched for to remote runners is shortened until it is back within bounds",
			"what", string(v.Kind), "moved", v.Moved, "bound", v.Bound, "s", c.s.cfg.Timing.Skew, "term", c.s.cfg.Timing.Lease,
			"runway_cut", v.Excess, "store_time", store, "rtt", recv.Sub(sent))
	}
}

// excess is the cut in force at now (a reading of the server's clock).
func (c *storeClock) excess(now time.Time) time.Duration { return c.watch.Excess(now.Sub(c.base)) }

// timing is t with S widened by the cut in force at now and D_stop capped
// below the widened T_lease − S, as the keeper does.
func (c *storeClock) timing(t lease.Timing, now time.Time) lease.Timing {
	if x := c.excess(now); x > 0 {
		t.Skew = lease.AddSat(t.Skew, x)
		t.Stop = min(t.Stop, max(lease.SubSat(t.Lease, t.Skew), 0))
	}
	return t
}
