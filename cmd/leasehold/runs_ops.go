package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
)

// The one-run commands: `runs show|cancel|unblock|retry ID`. Each prints the
// run as it is after the call (--json: the runJSON object), so a script
// sees the state it left the run in. A run that does not exist exits 3,
// a cancel of a finished run, an unblock of one not blocked, a retry of
// one neither failed nor cancelled, or a retry at a fence the run has
// left (--fence) exits 4.

func runRunsShow(a *app, cmd *cobra.Command) {
	runOp(a, cmd, func(ctx context.Context, c *leasehold.Client, id int64) (*leasehold.Run, error) {
		return c.Run(ctx, id)
	})
}

func runRunsCancel(a *app, cmd *cobra.Command) {
	reason := cmd.Flags().String("reason", "cancelled by an operator", "why, kept as the run's reason")
	runOp(a, cmd, func(ctx context.Context, c *leasehold.Client, id int64) (*leasehold.Run, error) {
		return c.Cancel(ctx, id, *reason)
	})
}

func runRunsUnblock(a *app, cmd *cobra.Command) {
	runOp(a, cmd, func(ctx context.Context, c *leasehold.Client, id int64) (*leasehold.Run, error) {
		return c.Unblock(ctx, id)
	})
}

func runRunsRetry(a *app, cmd *cobra.Command) {
	fence := cmd.Flags().Int64("fence", 0, "retry only while the run still stands at this fence (the one you saw); 0: any")
	runOp(a, cmd, func(ctx context.Context, c *leasehold.Client, id int64) (*leasehold.Run, error) {
		return c.Retry(ctx, id, *fence)
	})
}

// runOp is a one-run command: --db and --json, the ID argument (checked
// by runIDArg), op, and the run it returns printed.
func runOp(a *app, cmd *cobra.Command, op func(context.Context, *leasehold.Client, int64) (*leasehold.Run, error)) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	asJSON := fs.Bool("json", false, "machine-readable: the run as one JSON object (the fields of `runs ls --json`)")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		id, err := parseRunID(args[0])
		if err != nil {
			return err
		}
		return withClient(ctx, open, func(c *leasehold.Client) error {
			r, err := op(ctx, c, id)
			if err != nil {
				return err
			}
			if *asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(toRunJSON(r))
			}
			printRun(out, r)
			return nil
		})
	})
}

// printRun prints one run, a field a line.
func printRun(out io.Writer, r *leasehold.Run) {
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Format(time.RFC3339Nano)
	}
	fmt.Fprintf(out, "run %d on %s: %s\n", r.ID, r.Queue, r.State)
	fmt.Fprintf(out, "  attempt    %d/%d (snoozes %d), priority %d, fence %d\n", r.Attempt, r.MaxAttempts, r.Snoozes, r.Priority, r.Fence)
	if r.Owner != "" {
		fmt.Fprintf(out, "  owner      %s until %s\n", r.Owner, stamp(r.ExpiresAt))
	}
	if r.UniqueKey != "" {
		fmt.Fprintf(out, "  unique key %s\n", r.UniqueKey)
	}
	fmt.Fprintf(out, "  created    %s, scheduled %s, finished %s\n", stamp(r.CreatedAt), stamp(r.ScheduledAt), stamp(r.FinishedAt))
	if r.Reason != "" {
		fmt.Fprintf(out, "  reason     %s\n", r.Reason)
	}
	if len(r.Payload) > 0 {
		fmt.Fprintf(out, "  payload    %s\n", truncate(string(r.Payload), 200))
	}
	if len(r.Result) > 0 {
		fmt.Fprintf(out, "  result     %s\n", truncate(string(r.Result), 200))
	}
}
