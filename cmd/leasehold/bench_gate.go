package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold/internal/bench"
)

// runBenchGate is `leasehold bench gate`: the write-behind gate's happy
// path and Renew beside one time.Now(), in the same process and rounds,
// so the ratio holds on a loaded machine too.
func runBenchGate(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	rounds := fs.Int("rounds", 5, "rounds (each runs the three loops back to back, about 1 s each)")
	cmd.RunE = a.action(func(_ context.Context, args []string, out io.Writer) error {
		if *rounds < 1 || *rounds > 100 {
			return usagef("--rounds: %d is not in 1..100", *rounds)
		}
		fmt.Fprintf(out, "leasehold bench gate — %s, %d rounds\n", time.Now().UTC().Format(time.RFC3339), *rounds)
		res, err := bench.Gate(*rounds)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  round   time.Now()      gate   gate/Now     renew       calls  gate allocs  renew allocs\n")
		var ratios, renews []float64
		for i, r := range res {
			fmt.Fprintf(out, "  %5d %9.1fns %8.1fns %9.2fx %7.1fns %11d %12d %13d\n", i+1, r.Now, r.Gate, r.Ratio(), r.Renew, r.Calls, r.GateAllocs, r.RenewAllocs)
			ratios = append(ratios, r.Ratio())
			renews = append(renews, r.Renew)
		}
		rm, rw := bench.MedianWorst(ratios)
		nm, nw := bench.MedianWorst(renews)
		fmt.Fprintf(out, "  gate/time.Now(): median %.2fx, worst %.2fx (target <= 1.2x); renew: median %.1f ns, worst %.1f ns (target <= 10 ns)\n", rm, rw, nm, nw)
		return nil
	})
}
