// Command peers runs the two shapes of `leasehold bench runs` — drain (a
// pre-filled queue of N runs worked empty) and mixed (N runs enqueued in
// batches of 100 while they are worked) — on Leasehold and on River, with a
// no-op handler, against the same database, and prints runs/s for each and
// the ratio Leasehold/River per shape and per store.
//
// It is a module of its own so that the main module depends on no peer: the
// Leasehold side goes through the public scheduler and driver packages
// (internal/bench cannot be imported from here), copying the few lines of
// shape logic, and River is used as its documentation shows.
//
// Every measurement gets a fresh store (a new Postgres schema, a new SQLite
// file), and the two systems alternate: leasehold drain, river drain,
// leasehold mixed, river mixed, with the first system swapped every other
// round so neither always runs on the warmer server.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"
)

// config is what the command line sets.
type config struct {
	PostgresURL string // "none" skips Postgres
	SQLiteDir   string
	Drain       int
	Mixed       int
	Concurrency int // Leasehold handlers per worker = River MaxWorkers
	Rounds      int
	Timeout     time.Duration // per measurement

	// RiverPGConns is the pgxpool size given to River: by default Leasehold's
	// Postgres driver total (4 critical + 16 general, as the bench opens it),
	// so both have the same connection budget.
	RiverPGConns int32
	// RiverFetchCooldown and RiverFetchPollInterval override River's
	// FetchCooldown / FetchPollInterval; zero keeps River's defaults
	// (100ms / 1s).
	RiverFetchCooldown     time.Duration
	RiverFetchPollInterval time.Duration
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	var cfg config
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.StringVar(&cfg.PostgresURL, "postgres", defaultPostgres(), `Postgres URL ("none" to skip); a throwaway schema per measurement`)
	fs.StringVar(&cfg.SQLiteDir, "sqlite-dir", "", "directory for the throwaway SQLite files (default: a new temp dir)")
	fs.IntVar(&cfg.Drain, "drain", 100000, "runs pre-filled for the drain shape")
	fs.IntVar(&cfg.Mixed, "mixed", 20000, "runs enqueued in batches of 100 while working, for the mixed shape")
	fs.IntVar(&cfg.Concurrency, "concurrency", 200, "Leasehold handlers per worker and River MaxWorkers")
	fs.IntVar(&cfg.Rounds, "rounds", 1, "rounds of all four measurements per store; the table shows the median")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "limit of one measurement")
	rpc := fs.Int("river-pg-conns", 20, "pgxpool MaxConns for River (Leasehold's driver opens 4 critical + 16 general)")
	fs.DurationVar(&cfg.RiverFetchCooldown, "river-fetch-cooldown", 0, "River FetchCooldown (0: River's default, 100ms)")
	fs.DurationVar(&cfg.RiverFetchPollInterval, "river-fetch-poll-interval", 0, "River FetchPollInterval (0: River's default, 1s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.RiverPGConns = int32(*rpc)
	if cfg.Drain < 1 || cfg.Mixed < 1 || cfg.Concurrency < 1 || cfg.Rounds < 1 || cfg.RiverPGConns < 1 {
		return fmt.Errorf("--drain %d, --mixed %d, --concurrency %d, --rounds %d, --river-pg-conns %d: each must be at least 1",
			cfg.Drain, cfg.Mixed, cfg.Concurrency, cfg.Rounds, cfg.RiverPGConns)
	}
	if cfg.SQLiteDir == "" {
		d, err := os.MkdirTemp("", "peers-bench-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		cfg.SQLiteDir = d
	}

	fmt.Fprintf(out, "bench/peers — %s; river %s; 1 Leasehold worker x %d handlers vs River MaxWorkers %d; no-op handler\n",
		time.Now().UTC().Format(time.RFC3339), moduleVersion("github.com/riverqueue/river"), cfg.Concurrency, cfg.Concurrency)
	fmt.Fprintf(out, "leasehold: FetchInterval 5ms, FetchCooldown 1ms (as `leasehold bench runs`); river: FetchCooldown %s, FetchPollInterval %s, pgxpool MaxConns %d\n",
		orDefault(cfg.RiverFetchCooldown, "100ms (default)"), orDefault(cfg.RiverFetchPollInterval, "1s (default)"), cfg.RiverPGConns)

	stores := []string{storeSQLite}
	if cfg.PostgresURL != "none" {
		stores = append(stores, storePostgres)
	}
	shapes := []struct {
		name string
		n    int
	}{{shapeDrain, cfg.Drain}, {shapeMixed, cfg.Mixed}}
	systems := []system{leaseholdSystem{}, riverSystem{}}

	var reports []*storeReport
	for _, store := range stores {
		rep := newStoreReport(store)
		reports = append(reports, rep)
		fmt.Fprintf(out, "\n[%s]\n", store)
		for round := range cfg.Rounds {
			order := systems
			if round%2 == 1 {
				order = []system{systems[1], systems[0]}
			}
			for _, shape := range shapes {
				for _, sys := range order {
					fmt.Fprintf(out, "  round %d  %-9s %-5s %7d runs ... ", round+1, sys.Name(), shape.name, shape.n)
					m, err := measure(ctx, cfg, store, sys, shape.name, shape.n)
					if err != nil {
						fmt.Fprintln(out, "failed")
						return fmt.Errorf("%s %s %s: %w", store, sys.Name(), shape.name, err)
					}
					fmt.Fprintf(out, "%8s  %8.0f runs/s  (stop %s; %d completed rows)\n",
						m.Elapsed.Round(time.Millisecond), m.PerSecond(), m.Stop.Round(time.Millisecond), m.Completed)
					rep.add(sys.Name(), shape.name, m)
				}
			}
		}
	}
	for _, rep := range reports {
		rep.print(out)
	}
	return nil
}

// measure runs one shape of one system on a fresh store and checks that
// every run was durably completed.
func measure(ctx context.Context, cfg config, store string, sys system, shape string, n int) (measurement, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	t, cleanup, err := newTarget(ctx, cfg, store, sys.Name())
	if err != nil {
		return measurement{}, err
	}
	defer cleanup()
	m, err := sys.Measure(ctx, cfg, t, shape, n)
	if err != nil {
		return m, err
	}
	m.Completed, err = t.countCompleted(ctx, sys.CompletedQuery())
	if err != nil {
		return m, fmt.Errorf("counting completed rows: %w", err)
	}
	if m.Completed != int64(n) {
		return m, fmt.Errorf("%d of %d runs completed after stop", m.Completed, n)
	}
	return m, nil
}

func defaultPostgres() string {
	for _, k := range []string{"LEASEHOLD_TEST_DATABASE_URL", "LEASEHOLD_DATABASE_URL"} {
		if u := os.Getenv(k); u != "" && u != "none" {
			return u
		}
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(unknown)"
}

func orDefault(d time.Duration, def string) string {
	if d == 0 {
		return def
	}
	return d.String()
}
