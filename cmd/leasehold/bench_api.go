package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/internal/bench"
)

// runBenchAPI is `leasehold bench api`: runs enqueued, claimed in batches
// and completed with complete-many by N remote workers through the HTTP
// API over loopback — a server.Server on a real TCP listener, the remote
// package's client — on each store; runs/s end to end and p50/p99 per
// endpoint. Bounded by --runs.
func runBenchAPI(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	dir := fs.String("dir", ".", "directory for the SQLite file")
	pgURL := fs.String("postgres", defaultBenchPostgres(), `Postgres URL ("none" to skip); a throwaway schema`)
	sqliteToo := fs.Bool("sqlite", true, "measure SQLite too")
	n := fs.Int("runs", 100000, "runs enqueued and worked per store")
	workers := fs.Int("workers", 8, "remote workers (each claims and completes in batches)")
	claimBatch := fs.Int("claim-batch", 500, "runs per claim call (at most 1000)")
	enqBatch := fs.Int("enqueue-batch", 1000, "runs per enqueue call")
	renewals := fs.Int("renewals", 0, "renew calls per held run between claim and complete (heartbeats through the API)")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		if *n < 1 || *workers < 1 || *claimBatch < 1 || *claimBatch > 1000 || *enqBatch < 1 {
			return usagef("bench api: --runs, --workers, --enqueue-batch must be positive and --claim-batch in 1..1000")
		}
		cfg := bench.APIConfig{Runs: *n, Workers: *workers, ClaimBatch: *claimBatch, EnqueueBatch: *enqBatch, Renewals: *renewals}
		fmt.Fprintf(out, "leasehold bench api — %s; %d runs, %d remote workers over loopback HTTP, claim batch %d, complete-many, enqueue batch %d\n",
			time.Now().UTC().Format(time.RFC3339), cfg.Runs, cfg.Workers, cfg.ClaimBatch, cfg.EnqueueBatch)
		type store struct {
			name string
			open func(ctx context.Context) (leasehold.Driver, func(), error)
		}
		var stores []store
		if *sqliteToo {
			stores = append(stores, store{"sqlite", func(ctx context.Context) (leasehold.Driver, func(), error) { return openBenchSQLite(ctx, *dir) }})
		}
		if *pgURL != "none" {
			stores = append(stores, store{"postgres", func(ctx context.Context) (leasehold.Driver, func(), error) { return openBenchPostgres(ctx, *pgURL) }})
		}
		bar, out := a.phases(out, "bench api", len(stores))
		defer endBar(bar)
		for _, st := range stores {
			bar.Describe("bench api: " + st.name)
			d, closeFn, err := st.open(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			r, err := bench.API(ctx, d, cfg)
			closeFn()
			if err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			fmt.Fprintf(out, "\n[%s]\n  enqueue: %s, %.0f runs/s\n  claim + complete-many (end to end through the API): %s, %.0f runs/s (%d claim calls, %d complete-many calls)\n",
				st.name, r.Enqueue.Round(time.Millisecond), r.EnqueuePerSecond(), r.Work.Round(time.Millisecond), r.WorkPerSecond(), r.Claims, r.Complete)
			if r.Renews > 0 {
				fmt.Fprintf(out, "  heartbeats: %d renew calls (%.0f/s), %d renewal statements (%.1f/s) — the server's keeper drains once per T_drain for all workers\n",
					r.Renews, float64(r.Renews)/r.Work.Seconds(), r.HeartbeatStatements, float64(r.HeartbeatStatements)/r.Work.Seconds())
			}
			fmt.Fprintf(out, "  %-26s %8s %10s %10s\n", "endpoint", "calls", "p50", "p99")
			for _, ep := range []string{"POST /v1/runs", "POST /v1/runs/claim", "POST /v1/runs/{id}/renew", "POST /v1/runs/complete"} {
				if len(r.Latency[ep]) == 0 {
					continue
				}
				fmt.Fprintf(out, "  %-26s %8d %10s %10s\n", ep, len(r.Latency[ep]),
					r.Quantile(ep, 0.5).Round(time.Microsecond), r.Quantile(ep, 0.99).Round(time.Microsecond))
			}
			_ = bar.Add(1)
		}
		return nil
	})
}
