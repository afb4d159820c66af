package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold/internal/bench"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/lease"
)

// runBenchMemory is `leasehold bench memory`: the Go heap and goroutine
// stacks per run held by one worker in mode writebehind (no-op handlers
// that block), at each --runs count, and the renewal statements per drain
// over a short window after (still one).
func runBenchMemory(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	dir := fs.String("dir", ".", "directory for the SQLite files")
	pgURL := fs.String("postgres", "none", `Postgres URL ("none", the default, measures SQLite only)`)
	counts := fs.String("runs", "10000,100000", "comma-separated held-run counts")
	scale := fs.Float64("scale", 3, "divide the run timing defaults by this")
	window := fs.Duration("window", 10*time.Second, "window in which renewal statements and drains are counted")
	heapProfile := fs.String("heapprofile", "", "write the heap profile, once every run is held, to this file (the last count's)")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		tm := scaled(lease.RunDefaults(), *scale)
		if err := tm.Validate(); err != nil {
			return err
		}
		var ns []int
		for _, s := range strings.Split(*counts, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 || n > 1_000_000 {
				return usagef("--runs: %q is not a count in 1..1000000", s)
			}
			ns = append(ns, n)
		}
		fmt.Fprintf(out, "leasehold bench memory — %s; one worker, mode writebehind, handlers blocking; T_renew %v, T_drain %v, window %v\n",
			time.Now().UTC().Format(time.RFC3339), tm.Renew, tm.Drain, *window)
		type store struct {
			name string
			open func(ctx context.Context) (scheduler.Store, func(), error)
		}
		stores := []store{{"sqlite", func(ctx context.Context) (scheduler.Store, func(), error) { return openBenchSQLite(ctx, *dir) }}}
		if *pgURL != "none" {
			stores = append(stores, store{"postgres", func(ctx context.Context) (scheduler.Store, func(), error) { return openBenchPostgres(ctx, *pgURL) }})
		}
		fmt.Fprintf(out, "  %-9s %8s %8s %14s %15s %11s %8s %14s %5s\n", "store", "runs", "held", "heap B/run", "stacks B/run", "renew stmts", "drains", "stmts/drain", "lost")
		for _, st := range stores {
			for _, n := range ns {
				s, closeFn, err := st.open(ctx)
				if err != nil {
					return fmt.Errorf("%s: %w", st.name, err)
				}
				r, err := bench.Heartbeats(ctx, s, bench.HeartbeatConfig{Runs: n, Mode: keeper.ModeWriteBehind, Timing: tm, Window: *window, HeapProfile: *heapProfile})
				closeFn()
				if err != nil {
					return fmt.Errorf("%s %d runs: %w", st.name, n, err)
				}
				perDrain := 0.0
				if r.Drains > 0 {
					perDrain = float64(r.Statements) / float64(r.Drains)
				}
				fmt.Fprintf(out, "  %-9s %8d %8d %14.0f %15.0f %11d %8d %14.2f %5d\n", st.name, n, r.HeldAtMeasure, r.HeapPerRun, r.StackPerRun, r.Statements, r.Drains, perDrain, r.Lost)
			}
		}
		return nil
	})
}
