package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/bench"
)

// runBenchWorlds is `leasehold bench worlds`: one hot world (the bank
// program) under concurrent submitters, on its home, handed to a spill
// node, and handed back, on SQLite and Postgres, each on a fresh store:
// commands/s and acknowledgement latency per phase, the longest gap in
// acknowledgements around each handoff, and the journal checked against
// every acknowledgement.
func runBenchWorlds(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	dir := fs.String("dir", ".", "directory for the SQLite files")
	pgURL := fs.String("postgres", defaultBenchPostgres(), `Postgres URL ("none" to skip); a throwaway schema`)
	subs := fs.Int("submitters", 8, "concurrent submitters")
	inflight := fs.Int("inflight", 64, "commands each submitter keeps outstanding")
	maxBatch := fs.Int("max-batch", 0, "commands per turn batch (one group commit); 0: the host's default")
	phase := fs.Duration("phase", 5*time.Second, "duration of each phase (home, spill, home again)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		cfg := bench.WorldsConfig{Submitters: *subs, InFlight: *inflight, Phase: *phase, MaxBatch: *maxBatch}
		fmt.Fprintf(out, "leasehold bench worlds — %s; one world, bank program, %d submitters x %d in flight, %s per phase\n",
			time.Now().UTC().Format(time.RFC3339), cfg.Submitters, cfg.InFlight, cfg.Phase)
		type opened struct {
			d     driver.Driver
			close func()
		}
		stores := []struct {
			name string
			open func() (opened, error)
		}{{"sqlite", func() (opened, error) { d, c, err := openBenchSQLite(ctx, *dir); return opened{d, c}, err }}}
		if *pgURL != "none" {
			stores = append(stores, struct {
				name string
				open func() (opened, error)
			}{"postgres", func() (opened, error) { d, c, err := openBenchPostgres(ctx, *pgURL); return opened{d, c}, err }})
		}
		for _, st := range stores {
			o, err := st.open()
			if err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			fmt.Fprintf(out, "\n[%s]\n", st.name)
			r, err := bench.Worlds(ctx, o.d, cfg)
			o.close()
			if err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			for _, p := range r.Phases {
				fmt.Fprintf(out, "  %-10s %8d acked in %6s: %8.0f commands/s  p50 %s  p99 %s\n",
					p.Name, p.Acked, p.Elapsed.Round(time.Millisecond), p.PerSecond(), p.P50.Round(10*time.Microsecond), p.P99.Round(10*time.Microsecond))
			}
			for i := range r.Handoffs {
				fmt.Fprintf(out, "  handoff %d: call %s, longest acknowledgement gap around it %s from %s into the call (target <= 50ms on Postgres)\n",
					i+1, r.Handoffs[i].Round(10*time.Microsecond), r.Gaps[i].Round(10*time.Microsecond), r.GapAt[i].Round(10*time.Microsecond))
			}
			fmt.Fprintf(out, "  CPU per acked command: this process %.1f µs, local postgres processes %.1f µs\n",
				perCmd(r.ProcessCPU, r.Acked), perCmd(r.PostgresCPU, r.Acked))
			for _, n := range []string{"home", "spill"} {
				s := r.Hosts[n]
				fmt.Fprintf(out, "  %-5s %6d turn batches, %6.1f entries per batch, loop blocked on appends %s, deciding %s\n",
					n, s.TurnBatches, float64(s.TurnEntries)/float64(max(s.TurnBatches, 1)),
					time.Duration(s.AppendWaitNanos).Round(time.Millisecond), time.Duration(s.DecideNanos).Round(time.Millisecond))
			}
			fmt.Fprintf(out, "  journal appends by entries:")
			for i, n := range r.BatchSizes {
				if n > 0 {
					fmt.Fprintf(out, " %d-%d: %d", 1<<i, 1<<(i+1)-1, n)
				}
			}
			fmt.Fprintln(out)
			fmt.Fprintf(out, "  checked against the journal: %d acked, %d lost, %d duplicated, ledger balanced: %v\n",
				r.Acked, r.Lost, r.Duplicated, r.Balanced)
			if r.Lost > 0 || r.Duplicated > 0 || !r.Balanced {
				return fmt.Errorf("%s: the journal does not match the acknowledgements", st.name)
			}
		}
		return nil
	})
}

// perCmd is d per command in µs.
func perCmd(d time.Duration, n int) float64 {
	return float64(d.Microseconds()) / float64(max(n, 1))
}
