package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// defaultListen is `leasehold serve`'s address: loopback, so a server
// started with no flags is not reachable from the network.
const defaultListen = "127.0.0.1:7460"

// runServe is `leasehold serve`: migrate the store, start the reclaimer
// and the world expiry sweep, serve the HTTP API until SIGINT/SIGTERM,
// then shut down in order and say what was done.
func runServe(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	db := fs.String("db", defaultStore(), "postgres:// URL or SQLite file path")
	listen := fs.String("listen", defaultListen, "address to serve the HTTP API on")
	grace := fs.Duration("shutdown-timeout", server.DefaultShutdownTimeout, "how long in-flight requests may finish after SIGINT/SIGTERM")
	certFile := fs.String("tls-cert", "", "PEM certificate (chain) file: serve HTTPS (with --tls-key)")
	keyFile := fs.String("tls-key", "", "PEM private key file of --tls-cert")
	rateLimit := fs.Float64("rate-limit", 0, "requests per second each token may make (0: no limit); over it: 429")
	rateBurst := fs.Int("rate-burst", 0, "requests a token may make at once (default: --rate-limit rounded up)")
	sw := addServeWorkerFlags(fs) // serve_workers.go
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		runTiming, err := sw.timing()
		if err != nil {
			return err
		}
		remoteMode, err := leasehold.ParseHeartbeatMode(*sw.mode)
		if err != nil {
			return usagef("--heartbeat-mode: %v", err)
		}
		// The starting mode covers remote runners too (their renewals go
		// through the server's keeper): one setting for every holder.
		scfg := server.Config{RateLimit: *rateLimit, RateBurst: *rateBurst, Timing: runTiming, RemoteMode: remoteMode}
		if (*certFile == "") != (*keyFile == "") {
			return usagef("--tls-cert and --tls-key go together")
		}
		scheme := "http"
		if *certFile != "" {
			tc, err := server.LoadTLS(*certFile, *keyFile)
			if err != nil {
				return err
			}
			scfg.TLS, scheme = tc, "https"
		}
		log := slog.New(slog.NewTextHandler(os.Stderr, nil))
		c, err := openClient(ctx, *db, leasehold.Config{Logger: log}) // migrates
		if err != nil {
			return err
		}
		scfg.Logger = log
		tp, stopTracing, err := serveTracing(ctx) // serve_tracing.go: OTLP when configured
		if err != nil {
			c.Close()
			return fmt.Errorf("tracing: %w", err)
		}
		defer stopTracing(context.Background())
		scfg.TracerProvider = tp
		s, err := server.New(c, scfg)
		if err != nil {
			c.Close()
			return err
		}
		if err := bootstrapToken(ctx, c, out); err != nil { // a zero-flag start is usable at once
			c.Close()
			return err
		}
		// The in-process workers stop before Serve shuts the server down (and
		// closes the client they write through): Serve sees its context end
		// only once they have.
		if err := sw.start(ctx, c, s, log); err != nil {
			sw.stop(*grace)
			c.Close()
			return err
		}
		serveCtx, serveDone := context.WithCancel(context.Background())
		defer serveDone()
		go func() {
			select {
			case <-ctx.Done():
				sw.stop(*grace)
				serveDone()
			case <-serveCtx.Done(): // Serve returned on its own
			}
		}()
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			c.Close()
			return err
		}
		fmt.Fprintf(out, "leasehold serve: listening on %s://%s (store: %s)\n", scheme, ln.Addr(), describeStore(*db))
		fmt.Fprintf(out, "leasehold serve: dashboard at %s://%s/ (sign in with a token)\n", scheme, ln.Addr())
		rep, err := s.Serve(serveCtx, ln, *grace)
		fmt.Fprintf(out, "leasehold serve: shutting down\n%s\n", rep)
		return err
	})
}

// describeStore names the store without its password.
func describeStore(db string) string {
	if s := storeFor(db); s.postgresURL != "" {
		return "postgres " + redact(s.postgresURL)
	}
	return "sqlite " + db
}
