package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold/internal/bugs"
	"github.com/leasehold/leasehold/internal/sim"
)

// runSim is `leasehold sim`: seeds of the deterministic simulator with a
// progress bar and a summary; a failing seed prints the one command that
// replays it and the trace leading to the violation.
func runSim(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	seeds := fs.Int("seeds", 100, "how many seeds to run")
	from := fs.Uint64("from", 1, "first seed")
	jobs := fs.Int("jobs", runtime.GOMAXPROCS(0), "seeds simulated at once")
	verbose := fs.Bool("verbose", false, "print each seed's figures and, for a single seed, its whole trace")
	dir := fs.String("dir", sim.DefaultDir(), "folder for the per-seed SQLite files (a tmpfs is fastest)")
	bug := fs.String("bug", "", "plant one bug to see it caught (complete-fence, gate, revive, runway-answer, holder-runway-answer); needs a -tags simbugs build")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		if *bug != "" {
			reset, err := bugs.Set(*bug)
			if err != nil {
				return err
			}
			defer reset()
		}
		if *seeds < 1 || *jobs < 1 {
			return usagef("--seeds and --jobs must be at least 1")
		}
		start := time.Now()
		type outcome struct {
			r   *sim.Result
			err error
		}
		results := make([]outcome, *seeds)
		next := make(chan int)
		var wg sync.WaitGroup
		var mu sync.Mutex
		failed := 0
		bar := a.progress(int64(*seeds), "sim: seeds")
		defer endBar(bar)
		for range *jobs {
			wg.Go(func() {
				for i := range next {
					r, err := sim.Run(ctx, *from+uint64(i), sim.Options{Dir: *dir, Verbose: *verbose && *seeds == 1})
					mu.Lock()
					results[i] = outcome{r, err}
					if err != nil || !r.OK() {
						failed++
						bar.Describe(fmt.Sprintf("sim: seeds (%d failing)", failed))
					}
					_ = bar.Add(1)
					mu.Unlock()
				}
			})
		}
		for i := range *seeds {
			if ctx.Err() != nil {
				break
			}
			next <- i
		}
		close(next)
		wg.Wait()
		_ = bar.Finish()

		var sum sim.Result
		hostSeeds := 0
		var virt time.Duration
		var first *sim.Result
		for i, o := range results {
			if o.err != nil {
				return fmt.Errorf("seed %d: %w", *from+uint64(i), o.err)
			}
			r := o.r
			if r == nil {
				continue
			}
			virt += r.Virtual
			sum.Steps += r.Steps
			sum.Completed += r.Completed
			sum.Failed += r.Failed
			sum.Invocations += r.Invocations
			sum.Uncertain += r.Uncertain
			sum.Reclaims += r.Reclaims
			sum.Crashes += r.Crashes
			sum.Partitions += r.Partitions
			sum.Pauses += r.Pauses
			sum.Events += r.Events
			sum.LateRenewals += r.LateRenewals
			sum.Appends += r.Appends
			sum.Sweeps += r.Sweeps
			sum.JournalEntries += r.JournalEntries
			if r.Host {
				hostSeeds++
				sum.Commands += r.Commands
				sum.Resent += r.Resent
				sum.Handoffs += r.Handoffs
				sum.Payouts += r.Payouts
				sum.PayoutsRefused += r.PayoutsRefused
				sum.Reconciled += r.Reconciled
				sum.Signed += r.Signed
			}
			sum.MaxStrand = max(sum.MaxStrand, r.MaxStrand)
			if *verbose {
				fmt.Fprintf(out, "seed %d: %d completed, %d failed, %d invocations, %d uncertain, %d reclaims, %d crashes, %d partitions, %d pauses; %s\n",
					r.Seed, r.Completed, r.Failed, r.Invocations, r.Uncertain, r.Reclaims, r.Crashes, r.Partitions, r.Pauses, r.Knobs)
			}
			if !r.OK() && first == nil {
				first = r
			}
		}
		fmt.Fprintf(out, "%d seeds (%d..%d) in %v: %v of virtual time, %d events\n", *seeds, *from, *from+uint64(*seeds)-1,
			time.Since(start).Round(time.Millisecond), virt.Round(time.Second), sum.Steps)
		fmt.Fprintf(out, "runs: %d completed, %d failed; effects invoked %d, uncertain reports %d; events acknowledged %d\n",
			sum.Completed, sum.Failed, sum.Invocations, sum.Uncertain, sum.Events)
		fmt.Fprintf(out, "faults: %d crashes, %d partitions, %d pauses; %d reclaims (longest strand %v); %d renewals reached the store after expiry and were refused\n",
			sum.Crashes, sum.Partitions, sum.Pauses, sum.Reclaims, sum.MaxStrand.Round(time.Millisecond), sum.LateRenewals)
		fmt.Fprintf(out, "worlds: %d appends acknowledged, %d journal entries, %d expiry sweeps; every journal audited\n",
			sum.Appends, sum.JournalEntries, sum.Sweeps)
		fmt.Fprintf(out, "hosts: %d seeds in host mode; %d commands acknowledged (%d acknowledged ones sent again), %d handoffs, %d payouts (%d refused by the witness, %d uncertain ones reconciled), %d signed journal entries; every key, ledger and payout checked\n",
			hostSeeds, sum.Commands, sum.Resent, sum.Handoffs, sum.Payouts, sum.PayoutsRefused, sum.Reconciled, sum.Signed)
		if *verbose && *seeds == 1 && first == nil && results[0].r != nil {
			for _, l := range results[0].r.Trace {
				fmt.Fprintln(out, "  "+l)
			}
		}
		if first == nil {
			fmt.Fprintln(out, "violations: none")
			return nil
		}
		fmt.Fprintf(out, "violations: %d seeds failed; first: seed %d\n  %s\n  knobs: %s\n  replay: %s\n  trace (last events):\n",
			failed, first.Seed, first.Violations[0], first.Knobs, replay(first.Seed, *bug))
		for _, l := range first.Trace {
			fmt.Fprintln(out, "    "+l)
		}
		return reportedFailure{}
	})
}

// replay is the command that replays seed exactly (with the planted bug,
// if one was).
func replay(seed uint64, bug string) string {
	if bug == "" {
		return sim.Replay(seed)
	}
	return fmt.Sprintf("go run -tags simbugs ./cmd/leasehold sim --bug %s --seeds 1 --from %d --verbose", bug, seed)
}
