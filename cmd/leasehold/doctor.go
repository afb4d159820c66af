package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/doctor"
	"github.com/leasehold/leasehold/lease"
)

// runDoctor samples the store clock against this process's monotonic clock,
// prints the report and the write-behind verdict, and exits 1 on a refusal.
func runDoctor(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	db := dbFlag(fs)
	samples := fs.Int("samples", 20, "how many probes of the store clock to take (at least 2)")
	every := fs.Duration("every", 500*time.Millisecond, "wait between probes; the sample spans about samples × every")
	timingName := fs.String("timing", "runs", "judge by the default timing of `runs` (T_lease 90s, S 15s) or worlds (T_lease 30s, S 5s)")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		if *samples < 2 {
			return usagef("--samples %d: need at least 2 to measure a rate", *samples)
		}
		if *every < 0 {
			return usagef("--every %s must not be negative", *every)
		}
		var t lease.Timing
		switch *timingName {
		case "runs":
			t = lease.RunDefaults()
		case "worlds":
			t = lease.WorldDefaults()
		default:
			return usagef("--timing %q: want runs or worlds", *timingName)
		}

		// The doctor only reads the store's clock: it needs no schema, so it
		// opens the driver alone — no client, which would refuse a store not
		// migrated (ErrNotMigrated) or migrated by another version — and works
		// on either.
		d, err := openDriver(ctx, *db)
		if err != nil {
			return err
		}
		defer d.Close()

		fmt.Fprintf(out, "store:      %s; sampling %d probes %s apart; timing %s (T_lease %s, S %s)\n",
			d.Name(), *samples, *every, *timingName, t.Lease, t.Skew)
		if d.Name() == "sqlite" {
			fmt.Fprintln(out, "            SQLite's store clock is this process's wall clock: this measures its steps and rate against the monotonic clock")
		}
		// A spinner: doctor.Sample reports no probe as it goes.
		bar := a.progress(-1, fmt.Sprintf("sampling the store clock: %d probes", *samples))
		probes, err := doctor.Sample(ctx, d, clock.Real(), *samples, *every)
		endBar(bar)
		if err != nil {
			return err
		}
		rep := doctor.Analyze(probes, t)
		fmt.Fprint(out, rep)
		if pr, ok := d.(driver.PoolReporter); ok {
			for i, p := range pr.PoolStats() {
				label := "pools:     "
				if i > 0 {
					label = "           "
				}
				mean := time.Duration(0)
				if p.Acquires > 0 {
					mean = p.AcquireWaitTotal / time.Duration(p.Acquires)
				}
				fmt.Fprintf(out, "%s %-8s %d/%d open, %d in use, %d idle; %d acquires, %d waited for a connection, %d given up, mean acquire %s\n",
					label, p.Name, p.Open, p.Max, p.InUse, p.Idle, p.Acquires, p.Waited, p.Cancelled, mean)
			}
		} else {
			fmt.Fprintln(out, "pools:      none (SQLite: one in-process writer connection)")
		}

		if err := rep.CheckWriteBehind(t); err != nil {
			fmt.Fprintf(out, "write-behind: REFUSED: %v\n", err)
			return reportedFailure{} // exit 1; the report says why
		}
		fmt.Fprintln(out, "write-behind: OK")
		return nil
	})
}
