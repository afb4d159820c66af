package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
)

// DefaultShutdownTimeout bounds how long Serve lets in-flight requests
// finish after it was told to stop.
const DefaultShutdownTimeout = 10 * time.Second

// ShutdownReport says what Serve did when it stopped.
type ShutdownReport struct {
	Claimed        int64         // runs claimed through this server over its life
	InFlight       int64         // requests being answered when the stop began
	CutOff         bool          // the timeout ran out before they all finished
	Took           time.Duration // from the stop to the store closed
	HostStopped    bool          // a world host was attached and stopped (its loops and keeper drained)
	HostStopErr    error         // what stopping it returned
	KeeperStopErr  error         // what stopping the remote holders' keeper (its last drain) returned
	ClientCloseErr error         // what closing the client (its services and the store) returned
}

// String is the report as `leasehold serve` prints it.
func (r ShutdownReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stopped claiming and accepting requests (%d runs claimed through this server)\n", r.Claimed)
	if r.CutOff {
		fmt.Fprintf(&b, "%d requests in flight at the stop; some were cut off at the timeout (their runners retry: every write is fenced or keyed)\n", r.InFlight)
	} else {
		fmt.Fprintf(&b, "%d requests in flight at the stop, all answered\n", r.InFlight)
	}
	if r.HostStopped {
		if r.HostStopErr != nil {
			fmt.Fprintf(&b, "world host stopped with an error: %v\n", r.HostStopErr)
		} else {
			b.WriteString("world host stopped: world loops ended, its keeper drained\n")
		}
	}
	if r.KeeperStopErr != nil {
		fmt.Fprintf(&b, "remote leases' keeper stopped with an error on its last drain: %v\n", r.KeeperStopErr)
	} else {
		b.WriteString("remote leases' keeper drained and stopped\n")
	}
	if r.ClientCloseErr != nil {
		fmt.Fprintf(&b, "reclaimer and world sweep stopped, events flushed, store closed with an error: %v\n", r.ClientCloseErr)
	} else {
		b.WriteString("reclaimer and world sweep stopped, events flushed, appends drained, store closed\n")
	}
	fmt.Fprintf(&b, "shutdown took %v", r.Took.Round(time.Millisecond))
	return b.String()
}

// Serve is the whole `leasehold serve` lifecycle on ln: it starts the
// client's background services (the run reclaimer, the retention
// cleaner and the world expiry sweep — the client's own, through its one lifecycle), serves the API
// until ctx ends, then shuts down in order: long polls answer, new claims
// and readiness are refused, in-flight requests finish within timeout
// (DefaultShutdownTimeout when <= 0), and the client is closed (its
// services stopped, buffered events flushed, the store closed). Serve owns
// the client from the call on.
func (s *Server) Serve(ctx context.Context, ln net.Listener, timeout time.Duration) (ShutdownReport, error) {
	if timeout <= 0 {
		timeout = DefaultShutdownTimeout
	}
	start := func() error {
		if err := s.c.StartReclaimer(context.Background()); err != nil { // stopped by Close
			return fmt.Errorf("starting the reclaimer: %w", err)
		}
		if err := s.c.StartCleaner(context.Background()); err != nil { // stopped by Close
			return fmt.Errorf("starting the retention cleaner: %w", err)
		}
		if err := s.c.StartSweeper(context.Background()); err != nil {
			return fmt.Errorf("starting the world sweep: %w", err)
		}
		return nil
	}
	if err := start(); err != nil {
		_ = ln.Close()
		return ShutdownReport{ClientCloseErr: s.c.Close()}, err
	}
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS.Clone())
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return context.Background() },
		ErrorLog:    slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	stopAt := time.Now() // the report's wall-clock figure, not a lease decision
	log := s.cfg.Logger
	s.beginStopping()
	rep := ShutdownReport{Claimed: s.claims.Load(), InFlight: s.inFlight.Load()}
	log.Info("shutdown: stopped claiming; long polls answer what they have", "in_flight", rep.InFlight, "claimed", rep.Claimed, "bound", timeout)
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		rep.CutOff = true
		_ = hs.Close()
		log.Warn("shutdown: requests still in flight at the bound were cut off", "left", s.inFlight.Load(), "bound", timeout)
	} else {
		log.Info("shutdown: every in-flight request answered")
	}
	if h := s.cfg.Host; h != nil {
		rep.HostStopped = true
		hctx, hcancel := context.WithTimeout(context.Background(), timeout)
		rep.HostStopErr = h.Stop(hctx) // ends its world loops and drains its keeper
		hcancel()
		log.Info("shutdown: world host stopped", "err", rep.HostStopErr)
	}
	kctx, kcancel := context.WithTimeout(context.Background(), timeout)
	rep.KeeperStopErr = s.book.stop(kctx) // one last drain of the remote leases, then the drain stops
	kcancel()
	log.Info("shutdown: remote leases' keeper drained and stopped", "err", rep.KeeperStopErr)
	rep.ClientCloseErr = s.c.Close() // reclaimer, sweep, event committer (flushed), appender (drained), store
	rep.Took = time.Since(stopAt)
	log.Info("shutdown: client closed", "err", rep.ClientCloseErr, "took", rep.Took)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return rep, fmt.Errorf("serving: %w", serveErr)
	}
	return rep, nil
}
