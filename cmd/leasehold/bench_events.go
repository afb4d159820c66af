package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold/internal/bench"
	"github.com/leasehold/leasehold/internal/scheduler"
)

// runBenchEvents is `leasehold bench events`: run events in batches (what
// the group committer sends, one statement chunk after chunk in one
// transaction) beside one INSERT per event, alternating in each round on
// the same store, so every round's ratio is measured under the same load;
// it prints each round, the median and the worst.
func runBenchEvents(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	dir := fs.String("dir", ".", "directory for the SQLite files")
	pgURL := fs.String("postgres", defaultBenchPostgres(), `Postgres URL ("none" to skip); a throwaway schema`)
	batch := fs.Int("batch", 1000, "events per group-committed batch")
	dur := fs.Duration("duration", time.Second, "time per measurement (each round measures both)")
	rounds := fs.Int("rounds", 5, "rounds per store")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		if *rounds < 1 || *rounds > 100 || *batch < 1 || *batch > 10000 {
			return usagef("--rounds must be in 1..100 and --batch in 1..10000")
		}
		fmt.Fprintf(out, "leasehold bench events — %s; %d rounds of %s each way, batches of %d; load average %s\n",
			time.Now().UTC().Format(time.RFC3339), *rounds, *dur, *batch, loadAverage())
		type opener func(ctx context.Context) (scheduler.Store, func(), error)
		stores := []struct {
			name string
			open opener
		}{{"sqlite", func(ctx context.Context) (scheduler.Store, func(), error) { return openBenchSQLite(ctx, *dir) }}}
		if *pgURL != "none" {
			stores = append(stores, struct {
				name string
				open opener
			}{"postgres", func(ctx context.Context) (scheduler.Store, func(), error) { return openBenchPostgres(ctx, *pgURL) }})
		}
		for _, st := range stores {
			store, closeFn, err := st.open(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			fmt.Fprintf(out, "\n[%s]\n  round   batched rows/s   single rows/s    ratio   process CPU/row batched  single\n", st.name)
			var ratios []float64
			for i := range *rounds {
				ev, err := bench.Events(ctx, store, *batch, *dur)
				if err != nil {
					closeFn()
					return fmt.Errorf("%s events: %w", st.name, err)
				}
				r := ev.Batched / ev.Single
				ratios = append(ratios, r)
				fmt.Fprintf(out, "  %5d %16.0f %15.0f %7.1fx %23s %7s\n", i+1, ev.Batched, ev.Single, r, ev.BatchedCPU, ev.SingleCPU)
			}
			closeFn()
			median, _ := bench.MedianWorst(ratios)
			worst := ratios[0]
			for _, r := range ratios {
				worst = min(worst, r)
			}
			fmt.Fprintf(out, "  group-committed vs one INSERT per event: median %.1fx, worst %.1fx (target >= 30x); load average now %s\n", median, worst, loadAverage())
		}
		return nil
	})
}

// loadAverage is the machine's 1, 5 and 15 minute load averages
// (/proc/loadavg), printed with the rates: the single-INSERT side is one
// fsync per event and a loaded machine stretches it, which inflates every
// ratio. "?" where the file is not there.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
