package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// defaultListen is `leasehold serve`'s address: loopback, so a server
// started with no flags is not reachable from the network (auth arrives
// in a later increment).
const defaultListen = "127.0.0.1:7460"

// runServe is `leasehold serve`: migrate the store, start the reclaimer
// and the world expiry sweep, serve the HTTP API until SIGINT/SIGTERM,
// then shut down in order and say what was done.
func runServe(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("serve", out)
	db := fs.String("db", defaultStore(), "postgres:// URL or SQLite file path")
	listen := fs.String("listen", defaultListen, "address to serve the HTTP API on")
	grace := fs.Duration("shutdown-timeout", server.DefaultShutdownTimeout, "how long in-flight requests may finish after SIGINT/SIGTERM")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	c, err := openClient(ctx, *db, leasehold.Config{Logger: log}) // migrates
	if err != nil {
		return err
	}
	s, err := server.New(c, server.Config{Logger: log})
	if err != nil {
		c.Close()
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		c.Close()
		return err
	}
	fmt.Fprintf(out, "leasehold serve: listening on http://%s (store: %s)\n", ln.Addr(), describeStore(*db))
	rep, err := s.Serve(ctx, ln, *grace)
	fmt.Fprintf(out, "leasehold serve: shutting down\n%s\n", rep)
	return err
}

// describeStore names the store without its password.
func describeStore(db string) string {
	if s := storeFor(db); s.postgresURL != "" {
		return "postgres " + redact(s.postgresURL)
	}
	return "sqlite " + db
}
