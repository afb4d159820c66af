package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/bench"
)

// runBenchRetention is `leasehold bench retention`: finished runs with
// events and effects deleted by the cleaner in bounded batches while a
// claimer keeps claiming — the claim's p99 during the cleanup against
// without it, the tables before and after, and the run with an uncertain
// effect kept (issue 16, must-show 2). Each store is fresh.
func runBenchRetention(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	dir := fs.String("dir", ".", "directory for the SQLite file")
	pgURL := fs.String("postgres", defaultBenchPostgres(), `Postgres URL ("none" to skip); a throwaway schema`)
	stores := fs.String("stores", "sqlite,postgres", "stores to measure: sqlite, postgres or both")
	n := fs.Int("runs", 100000, "finished runs to delete")
	events := fs.Int("events", 2, "events per finished run")
	effectEvery := fs.Int("effect-every", 10, "a committed effect on every n-th finished run")
	batch := fs.Int("batch", 0, "runs per delete transaction (the cleaner's batch); 0: the client's default (Postgres 1000, SQLite 250)")
	live := fs.Int("live", 100000, "runs queued for the claimer")
	baseline := fs.Duration("baseline", 5*time.Second, "the claimer alone, before the cleanup")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		if *n < 1 || *batch < 0 || *batch > driver.MaxRunDeleteBatch || *baseline <= 0 {
			return usagef("--runs and --baseline must be positive, --batch in 0..%d", driver.MaxRunDeleteBatch)
		}
		cfg := bench.RetentionConfig{Runs: *n, EventsPerRun: *events, EffectEvery: *effectEvery, Batch: *batch, Live: *live, Baseline: *baseline}
		fmt.Fprintf(out, "leasehold bench retention — %s; %d finished runs, %d events each, an effect every %d; one claimer (claim 1, complete)\n",
			time.Now().UTC().Format(time.RFC3339), cfg.Runs, cfg.EventsPerRun, cfg.EffectEvery)
		for _, st := range strings.Split(*stores, ",") {
			var (
				d       driver.Driver
				closeFn func()
				count   func(context.Context) (bench.Tables, error)
			)
			switch st {
			case "sqlite":
				s, c, err := openBenchSQLite(ctx, *dir)
				if err != nil {
					return err
				}
				d, closeFn = s, c
				count = func(ctx context.Context) (bench.Tables, error) {
					tx, err := s.BeginTx(ctx)
					if err != nil {
						return bench.Tables{}, err
					}
					defer tx.Rollback()
					var t bench.Tables
					err = tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM run_effects), (SELECT count(*) FROM run_events),
					(SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size())`).Scan(&t.Runs, &t.Effects, &t.Events, &t.Bytes)
					return t, err
				}
			case "postgres":
				if *pgURL == "none" {
					continue
				}
				s, c, err := openBenchPostgres(ctx, *pgURL)
				if err != nil {
					return err
				}
				d, closeFn = s, c
				count = func(ctx context.Context) (bench.Tables, error) {
					tx, err := s.BeginTx(ctx, pgx.TxOptions{})
					if err != nil {
						return bench.Tables{}, err
					}
					defer tx.Rollback(ctx)
					var t bench.Tables
					err = tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM run_effects), (SELECT count(*) FROM run_events),
					pg_total_relation_size('runs') + pg_total_relation_size('run_effects') + pg_total_relation_size('run_events')`).
						Scan(&t.Runs, &t.Effects, &t.Events, &t.Bytes)
					return t, err
				}
			default:
				return usagef("--stores: unknown store %q", st)
			}
			c := cfg
			if c.Batch == 0 {
				c.Batch = 1000
				if st == "sqlite" {
					c.Batch = leasehold.DefaultSQLiteCleanerBatch
				}
			}
			fmt.Fprintf(out, "\n[%s] cleaner batch %d; filling ...\n", st, c.Batch)
			r, err := bench.Retention(ctx, d, c, count)
			closeFn()
			if err != nil {
				return fmt.Errorf("%s: %w", st, err)
			}
			fmt.Fprintf(out, "  filled in %s\n", r.Fill.Round(time.Millisecond))
			fmt.Fprintf(out, "  before: %d runs, %d effects, %d events, %.1f MiB\n", r.Before.Runs, r.Before.Effects, r.Before.Events, float64(r.Before.Bytes)/(1<<20))
			fmt.Fprintf(out, "  cleanup: %d runs, %d effects, %d events deleted in %d batches, %s\n",
				r.Deleted.Runs, r.Deleted.Effects, r.Deleted.Events, r.Deleted.Batches, r.Cleanup.Round(time.Millisecond))
			fmt.Fprintf(out, "  after:  %d runs, %d effects, %d events, %.1f MiB (deleted rows' space is reused; the files shrink only on VACUUM)\n",
				r.After.Runs, r.After.Effects, r.After.Events, float64(r.After.Bytes)/(1<<20))
			fmt.Fprintf(out, "  claim latency without cleanup: n=%d p50=%s p99=%s max=%s\n", r.Baseline.N, r.Baseline.P50, r.Baseline.P99, r.Baseline.Max)
			fmt.Fprintf(out, "  claim latency during cleanup:  n=%d p50=%s p99=%s max=%s\n", r.During.N, r.During.P50, r.During.P99, r.During.Max)
			fmt.Fprintf(out, "  run %d with an unresolved uncertain effect kept: %v\n", r.UncertainRun, r.UncertainKept)
			if !r.UncertainKept {
				return fmt.Errorf("%s: the run with an uncertain effect was deleted", st)
			}
		}
		return nil
	})
}
