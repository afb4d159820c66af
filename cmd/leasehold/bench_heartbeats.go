package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold/internal/bench"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/lease"
)

// runBenchHeartbeats is `leasehold bench heartbeats`: the renewal traffic
// of N runs held by one process, mode sync beside mode writebehind, on
// each store, with the ratios. The timing is the run defaults divided by
// --scale, so a window of a few renewal periods fits in seconds.
func runBenchHeartbeats(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	dir := fs.String("dir", ".", "directory for the SQLite files")
	pgURL := fs.String("postgres", defaultBenchPostgres(), `Postgres URL ("none" to skip); a throwaway schema per mode`)
	n := fs.Int("runs", 10000, "runs held at once by one worker")
	scale := fs.Float64("scale", 3, "divide the run timing defaults (90s lease, 15s renew, 5s drain…) by this")
	window := fs.Duration("window", 20*time.Second, "measured time per mode, after one renewal period of warm-up")
	sqliteToo := fs.Bool("sqlite", true, "also measure SQLite")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		if *scale < 1 || *scale > 100 {
			return usagef("--scale %v is outside 1..100", *scale)
		}
		tm := scaled(lease.RunDefaults(), *scale)
		if err := tm.Validate(); err != nil {
			return err
		}
		fmt.Fprintf(out, "leasehold bench heartbeats — %s; %d runs held by one worker, handlers waiting\n", time.Now().UTC().Format(time.RFC3339), *n)
		fmt.Fprintf(out, "timing = run defaults / %g: T_lease %v, T_renew %v, T_drain %v, D_stop %v, S %v; window %v per mode\n",
			*scale, tm.Lease, tm.Renew, tm.Drain, tm.Stop, tm.Skew, *window)

		type store struct {
			name string
			open func(ctx context.Context) (scheduler.Store, func(), error)
			cfg  func(ctx context.Context, s scheduler.Store, c *bench.HeartbeatConfig) error
		}
		var stores []store
		if *sqliteToo {
			stores = append(stores, store{"sqlite (WAL, synchronous=FULL, in-process)",
				func(ctx context.Context) (scheduler.Store, func(), error) { return openBenchSQLite(ctx, *dir) },
				func(context.Context, scheduler.Store, *bench.HeartbeatConfig) error { return nil }})
		}
		if *pgURL != "none" {
			stores = append(stores, store{"postgres (synchronous_commit=on)",
				func(ctx context.Context) (scheduler.Store, func(), error) { return openBenchPostgres(ctx, *pgURL) },
				func(ctx context.Context, _ scheduler.Store, c *bench.HeartbeatConfig) error {
					conn, err := pgx.Connect(ctx, *pgURL)
					if err != nil {
						return err
					}
					c.Commits = func(ctx context.Context) (int64, error) {
						var v int64
						err := conn.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&v)
						return v, err
					}
					if _, err := bench.PostgresCPU(); err == nil {
						c.StoreCPU = bench.PostgresCPU
					}
					return nil
				}})
		}
		bar, out := a.phases(out, "bench heartbeats", 2*len(stores))
		defer endBar(bar)
		for _, st := range stores {
			fmt.Fprintf(out, "\n[%s]\n", st.name)
			fmt.Fprintf(out, "  %-12s %12s %12s %10s %12s %12s %12s %6s\n", "mode", "stmts/s", "rows/s", "rows/stmt", "commits/s", "db CPU", "proc CPU", "lost")
			var rs []bench.HeartbeatResult
			for _, mode := range []keeper.Mode{keeper.ModeSync, keeper.ModeWriteBehind} {
				bar.Describe(fmt.Sprintf("bench heartbeats: %s %s", strings.Fields(st.name)[0], mode))
				s, closeFn, err := st.open(ctx)
				if err != nil {
					return fmt.Errorf("%s: %w", st.name, err)
				}
				c := bench.HeartbeatConfig{Runs: *n, Mode: mode, Timing: tm, Window: *window}
				if err := st.cfg(ctx, s, &c); err != nil {
					closeFn()
					return err
				}
				r, err := bench.Heartbeats(ctx, s, c)
				closeFn()
				if err != nil {
					return fmt.Errorf("%s %s: %w", st.name, mode, err)
				}
				commits := "n/a"
				if r.Commits >= 0 {
					commits = fmt.Sprintf("%.1f", float64(r.Commits)/r.Window.Seconds())
				} else {
					commits = fmt.Sprintf("%.1f", r.StatementsPerSecond()) // one transaction per statement
				}
				dbCPU := "in proc"
				if c.StoreCPU != nil {
					dbCPU = r.StoreCPU.Round(10 * time.Millisecond).String()
				}
				fmt.Fprintf(out, "  %-12s %12.2f %12.0f %10.1f %12s %12s %12s %6d\n", mode, r.StatementsPerSecond(), r.RowsPerSecond(),
					r.RowsPerStatement(), commits, dbCPU, r.ProcCPU.Round(10*time.Millisecond), r.Lost)
				rs = append(rs, r)
				_ = bar.Add(1)
			}
			sy, wb := rs[0], rs[1]
			fmt.Fprintf(out, "  sync/writebehind: statements %.0fx fewer (target >= 1000x), rows/s %.2f (same rows/s: ~1)",
				ratio(sy.StatementsPerSecond(), wb.StatementsPerSecond()), wb.RowsPerSecond()/sy.RowsPerSecond())
			if sy.Commits >= 0 && wb.Commits > 0 {
				fmt.Fprintf(out, ", commits %.0fx fewer", ratio(float64(sy.Commits), float64(wb.Commits)))
			}
			if sy.StoreCPU > 0 {
				fmt.Fprintf(out, ", database CPU %.1fx less (target >= 10x)", ratio(sy.StoreCPU.Seconds(), wb.StoreCPU.Seconds()))
			} else {
				fmt.Fprintf(out, ", process CPU %.1fx less", ratio(sy.ProcCPU.Seconds(), wb.ProcCPU.Seconds()))
			}
			fmt.Fprintln(out)
		}
		return nil
	})
}

// ratio is a/b, or a divided by the smallest measurable b when b is 0.
func ratio(a, b float64) float64 {
	if b <= 0 {
		b = 1e-2
	}
	return a / b
}

// scaled divides every duration of t by f.
func scaled(t lease.Timing, f float64) lease.Timing {
	d := func(v time.Duration) time.Duration { return time.Duration(float64(v) / f) }
	return lease.Timing{Lease: d(t.Lease), Renew: d(t.Renew), Drain: d(t.Drain), Stop: d(t.Stop), Skew: d(t.Skew), Poll: d(t.Poll), Margin: d(t.Margin)}
}
