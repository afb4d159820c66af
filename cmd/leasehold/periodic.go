package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
)

// runPeriodic is `leasehold periodic`: check a periodic schedule as
// Config.Periodic would take it, and show its ticks and their runs'
// unique keys (the keys every process enqueues them under).
func runPeriodic(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	name := fs.String("name", "schedule", "the schedule's name (its runs' keys are periodic:<name>:<tick>)")
	cronExpr := fs.String("cron", "", `cron expression: five fields, six with seconds, or a descriptor (@daily, @every 90m)`)
	every := fs.Duration("every", 0, "fixed interval instead of --cron (ticks at multiples of it since the Unix epoch)")
	count := fs.Int("count", 5, "next ticks to show")
	from := fs.String("from", "", "RFC 3339 time to count from (default: now)")
	cmd.RunE = a.action(func(_ context.Context, args []string, out io.Writer) error {
		at := time.Now().UTC()
		if *from != "" {
			t, err := time.Parse(time.RFC3339Nano, *from)
			if err != nil {
				return usagef("--from: %v", err)
			}
			at = t.UTC()
		}
		if *count < 0 || *count > 1000 {
			return usagef("--count: %d is outside 0..1000", *count)
		}
		p := leasehold.PeriodicRun{Name: *name, Cron: *cronExpr, Every: *every, Run: leasehold.Enqueue{Queue: "periodic"}}
		last, next, err := leasehold.PeriodicTicks(p, at, *count)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "schedule %q from %s\n", *name, at.Format(time.RFC3339Nano))
		if !last.IsZero() {
			fmt.Fprintf(out, "  latest tick   %s  %s\n", last.Format(time.RFC3339), leasehold.PeriodicKey(*name, last))
		}
		for _, t := range next {
			fmt.Fprintf(out, "  next          %s  %s\n", t.Format(time.RFC3339), leasehold.PeriodicKey(*name, t))
		}
		return nil
	})
}
