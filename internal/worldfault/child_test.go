package worldfault

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/lease"
)

const hostEnv = "LEASEHOLD_WORLDFAULT_HOST"

// hostConfig is what the parent hands a host process.
type hostConfig struct {
	Node        string
	PostgresURL string // through the process's fault proxy
	Schema      string
	Timing      lease.Timing
	Life        time.Duration
	EffectsURL  string // the witness: the payouts' effects are POSTed there
}

// timing is the world defaults divided by 10.
var timing = lease.Timing{Lease: 3 * time.Second, Renew: 500 * time.Millisecond, Drain: 100 * time.Millisecond,
	Stop: 1500 * time.Millisecond, Skew: 500 * time.Millisecond, Poll: 100 * time.Millisecond, Margin: 100 * time.Millisecond}

// runHostProcess is the child: a bank host serving its HTTP API on a free
// loopback port, whose address is its first line of output; it exits when
// its stdin closes, or after Life.
func runHostProcess(raw string) int {
	var cfg hostConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "host config:", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("node", cfg.Node)
	ctx := context.Background()
	// The driver's defaults divided by 10 would give a 200 ms acquire
	// timeout: a loaded box (CI runs these beside the rest of the suite)
	// takes longer than that to open a connection through the proxy, and
	// the host then failed at start ("no general connection free within
	// 200ms") or failed turns that a retry repeated. 600 ms is still
	// shorter than the statement timeout, as the driver requires, and a
	// failed open (start-up only) is tried again, a bounded number of times.
	var d *postgres.Driver
	var err error
	for range 10 {
		d, err = postgres.Open(ctx, postgres.Config{URL: cfg.PostgresURL, Schema: cfg.Schema, Logger: log,
			AcquireTimeout: 600 * time.Millisecond, StatementTimeout: time.Second})
		if err == nil {
			break
		}
		log.Warn("open failed; trying again", "err", err)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	defer d.Close()
	h, err := host.New(host.Config{Store: d, Node: cfg.Node, Program: programs.Bank{}, Timing: cfg.Timing, Logger: log,
		Effector: &host.WebhookEffector{URL: cfg.EffectsURL, Client: &http.Client{Timeout: 5 * time.Second}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "host:", err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 1
	}
	srv := &http.Server{Handler: host.Handler(h), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("listening on http://%s\n", ln.Addr())
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(done) }()
	select {
	case <-done:
	case <-time.After(cfg.Life):
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	_ = h.Stop(sctx)
	return 0
}
