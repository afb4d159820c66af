package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/bench"
	"github.com/leasehold/leasehold/internal/scheduler"
)

// runBenchRuns is `leasehold bench runs`: runs/s with a no-op handler,
// fences included, in two shapes (drain: a pre-filled queue worked empty;
// mixed: enqueue and work at once), and event rows/s group-committed beside
// one INSERT per event, on SQLite and Postgres, each on a fresh store.
func runBenchRuns(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	dir := fs.String("dir", ".", "directory for the SQLite files")
	pgURL := fs.String("postgres", defaultBenchPostgres(), `Postgres URL ("none" to skip); a throwaway schema per shape`)
	drain := fs.Int("drain", 300000, "runs pre-filled for the drain shape")
	mixed := fs.Int("mixed", 50000, "runs enqueued while working for the mixed shape")
	workers := fs.Int("workers", 1, "Worker instances")
	conc := fs.Int("concurrency", 200, "handlers per worker")
	evBatch := fs.Int("events-batch", 1000, "events per group-committed statement")
	evDur := fs.Duration("events-duration", 2*time.Second, "time per events measurement")
	limits := benchLimitFlags(fs)
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		cfg := bench.RunsConfig{Workers: *workers, Concurrency: *conc}
		fmt.Fprintf(out, "leasehold bench runs — %s; %d worker(s) x %d handlers, no-op handler, sync heartbeats, batch completion\n",
			time.Now().UTC().Format(time.RFC3339), cfg.Workers, cfg.Concurrency)

		type opener func(ctx context.Context) (scheduler.Store, func(), error)
		sqliteOpen := func(ctx context.Context) (scheduler.Store, func(), error) { return openBenchSQLite(ctx, *dir) }
		pgOpen := func(ctx context.Context) (scheduler.Store, func(), error) { return openBenchPostgres(ctx, *pgURL) }
		stores := []struct {
			name string
			open opener
		}{{"sqlite", sqliteOpen}}
		if *pgURL != "none" {
			stores = append(stores, struct {
				name string
				open opener
			}{"postgres", pgOpen})
		}
		bar, out := a.phases(out, "bench runs", 3*len(stores))
		defer endBar(bar)
		for _, st := range stores {
			fmt.Fprintf(out, "\n[%s]\n", st.name)
			for _, shape := range []struct {
				name string
				n    int
				fn   func(context.Context, scheduler.Store, bench.RunsConfig) (bench.RunsResult, error)
			}{{"drain", *drain, bench.Drain}, {"mixed", *mixed, bench.Mixed}} {
				bar.Describe("bench runs: " + st.name + " " + shape.name)
				store, closeFn, err := st.open(ctx)
				if err != nil {
					return fmt.Errorf("%s: %w", st.name, err)
				}
				c := cfg
				c.Runs = shape.n
				if err := limits.apply(ctx, store, shape.name, out); err != nil {
					closeFn()
					return fmt.Errorf("%s %s: %w", st.name, shape.name, err)
				}
				fmt.Fprintf(out, "  %-6s %7d runs ... ", shape.name, shape.n)
				r, err := shape.fn(ctx, store, c)
				closeFn()
				if err != nil {
					return fmt.Errorf("%s %s: %w", st.name, shape.name, err)
				}
				fmt.Fprintf(out, "%s: %.0f runs/s\n", r.Elapsed.Round(time.Millisecond), r.PerSecond())
				_ = bar.Add(1)
			}
			bar.Describe("bench runs: " + st.name + " events")
			store, closeFn, err := st.open(ctx)
			if err != nil {
				return err
			}
			ev, err := bench.Events(ctx, store, *evBatch, *evDur)
			closeFn()
			if err != nil {
				return fmt.Errorf("%s events: %w", st.name, err)
			}
			fmt.Fprintf(out, "  events: %.0f rows/s in batches of %d, %.0f rows/s one INSERT per event: %.1fx (target >= 30x)\n",
				ev.Batched, ev.BatchSize, ev.Single, ev.Batched/ev.Single)
			_ = bar.Add(1)
		}
		return nil
	})
}

// openBenchSQLite opens a fresh, migrated SQLite store in a temporary
// folder under dir; the returned func closes and removes it.
func openBenchSQLite(ctx context.Context, dir string) (*sqlite.Driver, func(), error) {
	d, err := os.MkdirTemp(dir, "leasehold-bench-*")
	if err != nil {
		return nil, nil, err
	}
	s, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(d, "bench.db")})
	if err != nil {
		return nil, nil, err
	}
	if _, err := s.Migrate(ctx); err != nil {
		return nil, nil, err
	}
	return s, func() { s.Close(); os.RemoveAll(d) }, nil
}

// openBenchPostgres opens a migrated Postgres store in a throwaway schema;
// the returned func closes it and drops the schema.
func openBenchPostgres(ctx context.Context, url string) (*postgres.Driver, func(), error) {
	admin, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	schema := fmt.Sprintf("lh_bench_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return nil, nil, err
	}
	s, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, GeneralConns: 16})
	if err != nil {
		return nil, nil, err
	}
	if _, err := s.Migrate(ctx); err != nil {
		return nil, nil, err
	}
	return s, func() {
		s.Close()
		admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close(context.Background())
	}, nil
}
