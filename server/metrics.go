package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the server's Prometheus figures, on a registry of its own
// (not the global one), so two servers in one process — tests — do not
// collide.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	claimed  prometheus.Counter
	renewals *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leasehold_http_requests_total",
			Help: "HTTP API requests by route pattern and status code."}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "leasehold_http_request_duration_seconds",
			Help: "HTTP API request durations by route pattern (a claim's long poll included).", Buckets: prometheus.DefBuckets}, []string{"route"}),
		claimed: prometheus.NewCounter(prometheus.CounterOpts{Name: "leasehold_runs_claimed_total",
			Help: "Runs claimed through the HTTP API."}),
		renewals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leasehold_remote_renewals_total",
			Help: "Remote renewals by how they were made: writebehind (marked for the keeper's drain, no store call), sync (written before the answer), or dark (written before the answer and marked for the drain)."}, []string{"path"}),
	}
	m.reg.MustRegister(m.requests, m.duration, m.claimed, m.renewals,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// observe counts one answered request. route is the mux pattern, never
// the raw path, so the label set stays bounded whatever clients send.
func (m *metrics) observe(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

// Register adds collectors (the keeper's, a driver's pool figures) to the
// server's /metrics.
func (s *Server) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := s.metrics.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

func (m *metrics) handler() http.Handler { return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}) }
