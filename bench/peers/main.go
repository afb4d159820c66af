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
// With several settings per system (--sweep, or lists given to
// --river-max-workers, --river-fetch-cooldown, --river-fetch-poll-interval,
// --leasehold-concurrency) it first measures every setting per store
// (sweep.go) and keeps each system's best per store and shape, so River is
// compared at its best, not at its defaults; then it runs the side-by-side
// rounds (compare.go) and prints each round's ratio, the median and the
// worst (report.go).
//
// Every measurement gets a fresh store (a new Postgres schema, a new SQLite
// file), and the two systems alternate: leasehold drain, river drain,
// leasehold mixed, river mixed, with the first system swapped every other
// round so neither always runs on the warmer server.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// config is what the command line sets.
type config struct {
	PostgresURL string   // "none" skips Postgres
	Stores      []string // storeSQLite and/or storePostgres, in that order
	SQLiteDir   string
	Drain       int
	Mixed       int
	Rounds      int
	Timeout     time.Duration // per measurement

	// The settings each system is measured at. With more than one setting
	// per system the command first sweeps them (SweepDrain / SweepMixed runs,
	// SweepRounds measurements each, the median kept) and then compares
	// each system at its best, per store and shape.
	LeaseholdConcurrency   intList      // handlers of Leasehold's one Worker
	LeaseholdFetchCooldown durationList // its WorkerConfig.FetchCooldown; 0: Leasehold's default (1ms)
	RiverMaxWorkers        intList      // River MaxWorkers
	RiverFetchCooldown     durationList // River FetchCooldown; 0: River's default (100ms)
	RiverFetchPollInterval durationList // River FetchPollInterval; 0: River's default (1s)
	SweepDrain             int
	SweepMixed             int
	SweepRounds            int

	// RiverPGConns is the pgxpool size given to River: by default Leasehold's
	// Postgres driver total (4 critical + 16 general, as the bench opens it),
	// so both have the same connection budget.
	RiverPGConns int32
}

// The grid of --sweep: River's MaxWorkers and FetchCooldown as issue 13
// names them, FetchPollInterval at Leasehold's FetchInterval (5ms) — River
// polls only when no insert notification wakes it, which is what bounds its
// mixed shape on SQLite (no LISTEN there). Leasehold is swept over the same
// worker counts and cooldowns (its FetchInterval stays 5ms), so neither side
// is held at a setting that suits only the other.
var (
	sweepWorkers   = intList{200, 1000, 2000, 5000}
	sweepCooldowns = durationList{time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond}
	sweepPolls     = durationList{5 * time.Millisecond}
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	if cfg.SQLiteDir == "" {
		d, err := os.MkdirTemp("", "peers-bench-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		cfg.SQLiteDir = d
	}

	fmt.Fprintf(out, "bench/peers — %s; river %s; no-op handler; load average %s\n",
		time.Now().UTC().Format(time.RFC3339), moduleVersion("github.com/riverqueue/river"), loadAverage())
	fmt.Fprintf(out, "leasehold: 1 Worker x %s handlers x FetchCooldown %s (0: Leasehold's 1ms), FetchInterval 5ms (as `leasehold bench runs`)\n",
		cfg.LeaseholdConcurrency.String(), cfg.LeaseholdFetchCooldown.String())
	fmt.Fprintf(out, "river: MaxWorkers %s x FetchCooldown %s x FetchPollInterval %s (0: River's default), pgxpool MaxConns %d\n",
		cfg.RiverMaxWorkers.String(), cfg.RiverFetchCooldown.String(), cfg.RiverFetchPollInterval.String(), cfg.RiverPGConns)

	var reports []*storeReport
	for _, store := range cfg.Stores {
		best := onlySettings(cfg)
		if best == nil {
			if best, err = sweep(ctx, cfg, store, out); err != nil {
				return err
			}
		}
		rep, err := sideBySide(ctx, cfg, store, best, out)
		if err != nil {
			return err
		}
		reports = append(reports, rep)
	}
	for _, rep := range reports {
		rep.print(out)
	}
	fmt.Fprintf(out, "\nload average at the end: %s\n", loadAverage())
	return nil
}

// parseFlags reads the command line; --sweep fills the lists the command
// line leaves unset with the sweep grid.
func parseFlags(args []string) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	fs.StringVar(&cfg.PostgresURL, "postgres", defaultPostgres(), `Postgres URL ("none" to skip); a throwaway schema per measurement`)
	stores := fs.String("stores", "sqlite,postgres", "stores to measure, comma-separated")
	fs.StringVar(&cfg.SQLiteDir, "sqlite-dir", "", "directory for the throwaway SQLite files (default: a new temp dir)")
	fs.IntVar(&cfg.Drain, "drain", 100000, "runs pre-filled for the drain shape")
	fs.IntVar(&cfg.Mixed, "mixed", 20000, "runs enqueued in batches of 100 while working, for the mixed shape")
	conc := fs.Int("concurrency", 200, "Leasehold handlers and River MaxWorkers, where the lists below are not given")
	fs.IntVar(&cfg.Rounds, "rounds", 3, "side-by-side rounds per store; the table shows each round's ratio, the median and the worst")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Minute, "limit of one measurement")
	rpc := fs.Int("river-pg-conns", 20, "pgxpool MaxConns for River (Leasehold's driver opens 4 critical + 16 general)")
	doSweep := fs.Bool("sweep", false, "sweep River over MaxWorkers 200,1000,2000,5000 x FetchCooldown 1ms,2ms,5ms (FetchPollInterval 5ms) and Leasehold over the same handler counts x cooldowns, then compare each at its best")
	fs.Var(&cfg.LeaseholdConcurrency, "leasehold-concurrency", "Leasehold handler counts, comma-separated (default --concurrency; with --sweep River's MaxWorkers list)")
	fs.Var(&cfg.LeaseholdFetchCooldown, "leasehold-fetch-cooldown", "Leasehold FetchCooldown values, comma-separated (default 1ms; with --sweep River's FetchCooldown list)")
	fs.Var(&cfg.RiverMaxWorkers, "river-max-workers", "River MaxWorkers, comma-separated (default --concurrency)")
	fs.Var(&cfg.RiverFetchCooldown, "river-fetch-cooldown", "River FetchCooldown values, comma-separated (default 0: River's 100ms)")
	fs.Var(&cfg.RiverFetchPollInterval, "river-fetch-poll-interval", "River FetchPollInterval values, comma-separated (default 0: River's 1s)")
	fs.IntVar(&cfg.SweepDrain, "sweep-drain", 0, "drain runs per sweep measurement (default --drain)")
	fs.IntVar(&cfg.SweepMixed, "sweep-mixed", 0, "mixed runs per sweep measurement (default --mixed)")
	fs.IntVar(&cfg.SweepRounds, "sweep-rounds", 1, "measurements per setting in the sweep (the median is kept)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg.RiverPGConns = int32(*rpc)
	for _, st := range []string{storeSQLite, storePostgres} {
		if slices.Contains(strings.Split(*stores, ","), st) && (st != storePostgres || cfg.PostgresURL != "none") {
			cfg.Stores = append(cfg.Stores, st)
		}
	}
	if len(cfg.Stores) == 0 {
		return cfg, fmt.Errorf("--stores %q (with --postgres %q): no store to measure", *stores, cfg.PostgresURL)
	}
	if *doSweep {
		cfg.RiverMaxWorkers = orList(cfg.RiverMaxWorkers, sweepWorkers)
		cfg.RiverFetchCooldown = orList(cfg.RiverFetchCooldown, sweepCooldowns)
		cfg.RiverFetchPollInterval = orList(cfg.RiverFetchPollInterval, sweepPolls)
		cfg.LeaseholdConcurrency = orList(cfg.LeaseholdConcurrency, cfg.RiverMaxWorkers)
		cfg.LeaseholdFetchCooldown = orList(cfg.LeaseholdFetchCooldown, cfg.RiverFetchCooldown)
	}
	cfg.LeaseholdConcurrency = orList(cfg.LeaseholdConcurrency, intList{*conc})
	cfg.LeaseholdFetchCooldown = orList(cfg.LeaseholdFetchCooldown, durationList{time.Millisecond})
	cfg.RiverMaxWorkers = orList(cfg.RiverMaxWorkers, intList{*conc})
	cfg.RiverFetchCooldown = orList(cfg.RiverFetchCooldown, durationList{0})
	cfg.RiverFetchPollInterval = orList(cfg.RiverFetchPollInterval, durationList{0})
	cfg.SweepDrain = cmp.Or(cfg.SweepDrain, cfg.Drain)
	cfg.SweepMixed = cmp.Or(cfg.SweepMixed, cfg.Mixed)
	if *conc < 1 || cfg.Drain < 1 || cfg.Mixed < 1 || cfg.Rounds < 1 || cfg.RiverPGConns < 1 || cfg.SweepDrain < 1 || cfg.SweepMixed < 1 || cfg.SweepRounds < 1 {
		return cfg, fmt.Errorf("--concurrency, --drain, --mixed, --rounds, --river-pg-conns, --sweep-drain, --sweep-mixed, --sweep-rounds: each must be at least 1")
	}
	if len(riverSettings(cfg)) == 0 {
		return cfg, fmt.Errorf("no River setting left: River refuses a FetchPollInterval shorter than its FetchCooldown")
	}
	return cfg, nil
}

// measure runs one shape of one system on a fresh store and checks that
// every run was durably completed.
func measure(ctx context.Context, cfg config, store string, sys system, set setting, shape string, n int) (measurement, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	t, cleanup, err := newTarget(ctx, cfg, store, sys.Name())
	if err != nil {
		return measurement{}, err
	}
	defer cleanup()
	m, err := sys.Measure(ctx, cfg, set, t, shape, n)
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

// orList is l, or def when l is empty (cmp.Or for slices).
func orList[L ~[]E, E any](l, def L) L {
	if len(l) == 0 {
		return def
	}
	return l
}

// loadAverage is /proc/loadavg's first three fields: every timing printed
// beside it is bent by whatever else the machine runs.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "(unknown)"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "(unknown)"
	}
	return strings.Join(f[:3], " ")
}

func orDefault(d time.Duration, def string) string {
	if d == 0 {
		return def
	}
	return d.String()
}
