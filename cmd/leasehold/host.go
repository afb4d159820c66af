package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/lease"
)

// programsByName are the programs `leasehold host --program` can run.
var programsByName = map[string]host.Program{"bank": programs.Bank{}, "kv": programs.KV{}}

// runHost is `leasehold host`: a world host process. It holds the worlds
// the store delivers to --node, runs their turns with --program, and
// serves the host's HTTP API (host.Handler) on --listen, printing the
// address it listens on as its first line. With --sweep it also runs the
// expiry sweep, as a home replica does; with --home-pool it is a replica
// of that home pool (host.Config.HomePool). SIGTERM or SIGINT stops it.
func runHost(a *app, cmd *cobra.Command) {
	cmd.AddCommand(a.command("rotate-key", "give --node a new ed25519 key: registered in the store, the key file swapped (the old one kept)", noArgs, runHostRotateKey))
	addHelpSubcommand(cmd)
	fs := cmd.Flags()
	db := fs.String("db", defaultStore(), "postgres:// URL or SQLite file path")
	node := fs.String("node", "", "this host's node name (required): the holder name its leases are granted to")
	prog := fs.String("program", "bank", "the program the worlds run: bank or kv")
	listen := fs.String("listen", "127.0.0.1:7461", "address of the host's HTTP API (port 0: any free port)")
	create := fs.String("create", "", "comma-separated worlds to create, homed on this node, at start")
	sweep := fs.Bool("sweep", false, "run the expiry sweep (a home replica)")
	keyFile := fs.String("key", "", "the node's ed25519 key file (PEM, created with mode 0600 on first start; a looser mode is refused); empty: a key for this process only")
	effectsURL := fs.String("effects-url", "", "where the worlds' side effects go (host.WebhookEffector): POSTed there, reconciled by GET ?idempotency_key=; empty: a command whose decision has effects is refused")
	snapEvery := fs.Int64("snapshot-every", 0, "snapshot a world's state every N journal positions (host.Config.SnapshotEvery; 0: the default, 10000; negative: take none, still restore)")
	homePool := fs.String("home-pool", "", "the home pool this host serves as a replica of: worlds homed on the pool whose holder's lease expires are granted to a live replica")
	wd := lease.WorldDefaults()
	term := fs.Duration("lease", wd.Lease, "world lease term T_lease")
	renew := fs.Duration("renew", wd.Renew, "T_renew")
	drain := fs.Duration("drain", wd.Drain, "T_drain")
	dstop := fs.Duration("dstop", wd.Stop, "D_stop")
	skew := fs.Duration("skew", wd.Skew, "S")
	poll := fs.Duration("poll", wd.Poll, "P (the sweep's period)")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		p, ok := programsByName[*prog]
		if !ok {
			return fmt.Errorf("--program %q: unknown program (have: bank, kv): %w", *prog, lease.ErrInvalid)
		}
		t := lease.Timing{Lease: *term, Renew: *renew, Drain: *drain, Stop: *dstop, Skew: *skew, Poll: *poll, Margin: *drain}
		if err := t.Validate(); err != nil {
			return err
		}
		var effector host.Effector
		if *effectsURL != "" {
			u, err := url.Parse(*effectsURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("--effects-url %q: an http:// or https:// URL is required: %w", *effectsURL, lease.ErrInvalid)
			}
			effector = &host.WebhookEffector{URL: *effectsURL, Client: &http.Client{Timeout: t.Lease}}
		}
		var key ed25519.PrivateKey // read before the store is opened: a refused key file changes nothing
		if *keyFile != "" {
			var err error
			if key, err = host.LoadOrCreateKey(*keyFile); err != nil {
				return err
			}
		}
		d, err := openDriver(ctx, *db)
		if err != nil {
			return err
		}
		defer d.Close()
		if _, err := d.Migrate(ctx); err != nil {
			return err
		}
		log := slog.New(slog.NewTextHandler(os.Stderr, nil))
		h, err := host.New(host.Config{Store: d, Node: *node, Program: p, Timing: t, Logger: log, HomePool: *homePool, Key: key, Effector: effector, SnapshotEvery: *snapEvery})
		if err != nil {
			return err
		}
		stopCtx := func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 10*time.Second)
		}
		defer func() {
			c, cancel := stopCtx()
			defer cancel()
			_ = h.Stop(c)
		}()
		if *sweep {
			sw := world.NewSweeper(d, clock.Real(), t, log)
			if err := sw.Start(ctx); err != nil {
				return err
			}
			defer func() {
				c, cancel := stopCtx()
				defer cancel()
				_ = sw.Stop(c)
			}()
		}
		for _, w := range strings.Split(*create, ",") {
			if w = strings.TrimSpace(w); w == "" {
				continue
			}
			if err := h.Create(ctx, w); err != nil {
				return fmt.Errorf("creating world %s: %w", w, err)
			}
		}
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: host.Handler(h), ReadHeaderTimeout: 10 * time.Second}
		fmt.Fprintf(out, "listening on http://%s node=%s program=%s\n", ln.Addr(), *node, p.Name())
		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(ln) }()
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
		c, cancel := stopCtx()
		defer cancel()
		if err := srv.Shutdown(c); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
}
