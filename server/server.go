package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/dashboard"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/internal/httpapi"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/journal"
)

// Server serves the HTTP API over a client. Create it with New, serve its
// Handler (or call Serve for the whole `leasehold serve` lifecycle).
//
// The run calls go to the client's store through the client's driver —
// the same validating driver (driver.Validating) the in-process worker
// writes through, so a remote runner's input meets the same rules, once,
// above the store, and every fence check is the store's own.
type Server struct {
	c       *leasehold.Client
	d       driver.Driver
	cfg     Config
	book    *leaseBook
	metrics *metrics
	mux     *http.ServeMux
	tokens  *tokenCache  // auth.go
	limits  *rateLimits  // ratelimit.go
	hostAPI http.Handler // host.Handler(cfg.Host); nil without a host
	workers workers      // in-process workers under the admin mode API (admin_mode.go)
	tracer  trace.Tracer // nil: no tracing (tracing.go)
	clock   *storeClock  // the runtime store-clock watch (clockwatch.go)
	counts  countsCache  // GET /v1/stats/runs's cache (dashboard_counts.go)
	rate    rateRing     // this server's throughput, for the charts (dashboard_rate.go)

	authRefusals *prometheus.CounterVec // metrics_auth.go

	// journalWatch wakes journal streams on the store's notifications.
	journalWatch *journalWatch
	// eventWatch wakes queue event streams on the store's notifications
	// (stream_queue.go).
	eventWatch *eventWatch

	// enqueued is closed (and replaced) when runs were enqueued through
	// this server, waking long-polling claims at once.
	wakeMu   sync.Mutex
	enqueued chan struct{}

	// stopping is closed when shutdown begins: long polls answer what
	// they have, new claims are refused (closed), /readyz says not ready.
	stopping     chan struct{}
	stoppingOnce sync.Once
	claims       atomic.Int64 // runs claimed through this server, for the shutdown report
	inFlight     atomic.Int64 // requests being answered, for the shutdown report
}

// New returns a server over c. c's lifecycle stays the caller's (Serve
// starts its background services and closes it when told to stop).
func New(c *leasehold.Client, cfg Config) (*Server, error) {
	if c == nil {
		return nil, fmt.Errorf("server: New needs a client: %w", leasehold.ErrInvalid)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s := &Server{c: c, d: c.Driver(), cfg: cfg, enqueued: make(chan struct{}), stopping: make(chan struct{})}
	book, err := newLeaseBook(s.d, cfg.Clock, cfg.Timing, keeper.Mode(cfg.RemoteMode), cfg.Logger)
	if err != nil {
		return nil, err
	}
	s.book = book
	if cfg.TracerProvider != nil {
		s.tracer = cfg.TracerProvider.Tracer("github.com/leasehold/leasehold/server")
	}
	s.tokens = newTokenCache(s.d, cfg.Clock, cfg.TokenCacheTTL)
	s.limits = newRateLimits(cfg.Clock, cfg.RateLimit, cfg.RateBurst)
	if cfg.Host != nil {
		s.hostAPI = host.Handler(cfg.Host)
	}
	s.journalWatch = &journalWatch{d: s.d, log: cfg.Logger}
	s.eventWatch = &eventWatch{d: s.d, log: cfg.Logger}
	s.metrics = newMetrics()
	s.clock = newStoreClock(s)
	s.book.cut, s.book.probe = s.clock.excess, s.clock.observeStore
	s.metrics.reg.MustRegister(s.clock.collectors()...)
	s.authRefusals = newAuthRefusals()
	s.metrics.reg.MustRegister(s.authRefusals)
	s.metrics.reg.MustRegister(c.CleanerCollector())
	// Labelled worker="remote-holders", so its keeper metrics share their
	// label names with the attached workers' (AttachWorker): one registry
	// refuses a name with two label sets.
	prometheus.WrapRegistererWith(prometheus.Labels{"worker": remoteHoldersWorker}, s.metrics.reg).MustRegister(book.k.Collector())
	if pr, ok := s.d.(driver.PoolReporter); ok {
		s.metrics.reg.MustRegister(newPoolCollector(pr))
	}
	s.mux = http.NewServeMux()
	for _, rt := range s.routes() {
		s.mux.Handle(rt.method+" "+rt.path, s.guard(rt)) // authz.go
	}
	ui := dashboard.Handler()
	for _, p := range dashboardPatterns {
		s.mux.Handle(p, ui)
	}
	return s, nil
}

// Handler returns the API: every route of routes.go, problems for the
// rest, and the request metrics around them.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	// The pattern is looked up first for the metrics label and the
	// unrouted answer; a routed request then goes through the mux itself,
	// which sets its path values.
	var h http.Handler = s.mux
	_, pattern := s.mux.Handler(r)
	if pattern == "" {
		h, pattern = s.unrouted(r), "unrouted"
	}
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	r, endTrace := s.traceRequest(r, pattern)
	defer func() { endTrace(sw.status) }()
	start := s.cfg.Clock.Now()
	if !isPublic(pattern) && !isDashboard(pattern) { // every route but /healthz and the dashboard's page shells needs a token, unrouted paths too
		ar, err := s.authenticate(r)
		if err != nil {
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.problem(w, r, err) })
		} else {
			r = ar
		}
	}
	h.ServeHTTP(sw, r)
	s.metrics.observe(pattern, sw.status, s.cfg.Clock.Since(start))
}

// unrouted answers a request no route matched: method-not-allowed when the
// path has a route under another method, not-found otherwise — as problem
// documents, like every other error.
func (s *Server) unrouted(r *http.Request) http.Handler {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := s.mux.Handler(probe); p != "" {
			allow = append(allow, m)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(allow) > 0 {
			w.Header()["Allow"] = allow
			httpapi.WriteProblem(w, http.StatusMethodNotAllowed, 0, &Problem{Type: ProblemMethod, Title: "method not allowed",
				Status: http.StatusMethodNotAllowed, Detail: fmt.Sprintf("%s %s: allowed %v", r.Method, r.URL.Path, allow)})
			return
		}
		httpapi.WriteProblem(w, http.StatusNotFound, 0, &Problem{Type: ProblemNotFound, Title: "not found",
			Status: http.StatusNotFound, Detail: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)})
	})
}

// dashboardPatterns are where the dashboard (package dashboard) is
// served: its page shells and assets carry no data, so they answer
// without a token, like /healthz; the data they show comes from the API
// routes, each under its rule.
var dashboardPatterns = []string{"GET /{$}", "GET " + dashboard.Prefix}

func isDashboard(pattern string) bool { return slices.Contains(dashboardPatterns, pattern) }

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Flush lets a long answer stream through the metrics wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// decode reads the request body strictly into v, within the body cap.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	return httpapi.Decode(w, r, s.cfg.MaxBodyBytes, v)
}

// idAndBody reads a run endpoint's {id} and its strict JSON body into a
// new T; on either error it answers the problem and ok is false (the one
// prologue of every POST /v1/runs/{id}/… handler).
func idAndBody[T any](s *Server, w http.ResponseWriter, r *http.Request) (id int64, req T, ok bool) {
	id, err := runID(r)
	if err == nil {
		err = s.decode(w, r, &req)
	}
	if err != nil {
		s.problem(w, r, err)
		return 0, req, false
	}
	return id, req, true
}

// runID reads the {id} path segment: a positive decimal run id.
func runID(r *http.Request) (int64, error) {
	v := r.PathValue("id")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, &journal.InputError{Field: "id", Problem: fmt.Sprintf("%.40q is not a positive run id", v)}
	}
	return id, nil
}

// wake wakes every long-polling claim.
func (s *Server) wake() {
	s.wakeMu.Lock()
	close(s.enqueued)
	s.enqueued = make(chan struct{})
	s.wakeMu.Unlock()
}

func (s *Server) enqueuedCh() <-chan struct{} {
	s.wakeMu.Lock()
	defer s.wakeMu.Unlock()
	return s.enqueued
}

// Close stops the remote holders' keeper after one last drain within ctx's
// deadline. Serve calls it; a caller serving Handler itself calls it when
// done (the keeper's loops run from the first claim on). Idempotent.
func (s *Server) Close(ctx context.Context) error {
	s.beginStopping()
	return s.book.stop(ctx)
}

// beginStopping marks the start of shutdown.
func (s *Server) beginStopping() { s.stoppingOnce.Do(func() { close(s.stopping) }) }

func (s *Server) isStopping() bool {
	select {
	case <-s.stopping:
		return true
	default:
		return false
	}
}
