package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/runs"
)

// runsCommand is `leasehold runs [ls]|show|cancel|unblock`. `runs` alone
// lists, as `runs ls` does.
func runsCommand(a *app) *cobra.Command {
	runsCmd := a.command("runs", "list runs by id, filtered by --queue and --state; show, cancel, unblock, retry one", noArgs, runRunsList)
	runsCmd.AddCommand(
		a.command("ls", "a page of runs by id, filtered by --queue and --state (--after the last id for the next page)", noArgs, runRunsList),
		a.command("show ID", "one run: its state, lease, attempts, payload and result", runIDArg, runRunsShow),
		a.command("cancel ID", "cancel a run that is not finished (a running one's holder is fenced out)", runIDArg, runRunsCancel),
		a.command("unblock ID", "make a blocked run available again", runIDArg, runRunsUnblock),
		a.command("retry ID", "send a failed or cancelled run round again (River's JobRetry): available at once, one more attempt if its budget is spent", runIDArg, runRunsRetry),
	)
	addHelpSubcommand(runsCmd)
	return runsCmd
}

// runIDArg is the one positional run ID, a positive integer.
func runIDArg(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usagef("%s needs one run ID, got %d arguments", cmd.CommandPath(), len(args))
	}
	if _, err := parseRunID(args[0]); err != nil {
		return err
	}
	return nil
}

func parseRunID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, usagef("run ID %q: want a positive integer", s)
	}
	return id, nil
}

// runRunsList is `leasehold runs [ls]`: a page of runs by id, filtered by
// queue and state (Client.Runs). The next page is --after the last id
// printed; a page shorter than --limit is the last.
func runRunsList(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	queue := fs.String("queue", "", "only runs of this queue")
	state := fs.String("state", "", "only runs in this state: available, running, blocked, completed, failed, cancelled")
	after := fs.Int64("after", 0, "only runs with an id above this (the last id of the previous page)")
	limit := fs.Int("limit", 100, "runs per page, at most 1000")
	asJSON := jsonFlag(fs)
	cmd.RunE = a.action(func(ctx context.Context, _ []string, out io.Writer) error {
		c, err := open(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		rs, err := c.Runs(ctx, leasehold.RunsFilter{Queue: *queue, State: runs.State(*state), After: *after, Limit: *limit})
		if err != nil {
			return err
		}
		if *asJSON {
			list := make([]runJSON, 0, len(rs))
			for _, r := range rs {
				list = append(list, toRunJSON(r))
			}
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(list)
		}
		if len(rs) == 0 {
			fmt.Fprintln(out, "no runs")
			return nil
		}
		for _, r := range rs {
			extra := ""
			if r.Owner != "" {
				extra = " owner " + r.Owner + " until " + r.ExpiresAt.Format(time.RFC3339)
			}
			if r.Reason != "" {
				extra += " — " + truncate(r.Reason, 80)
			}
			fmt.Fprintf(out, "%-8d %-20s %-9s attempt %d/%d fence %-4d scheduled %s%s\n",
				r.ID, r.Queue, r.State, r.Attempt, r.MaxAttempts, r.Fence, r.ScheduledAt.Format(time.RFC3339), extra)
		}
		return nil
	})
}

// runJSON is one run of `runs ls --json` and `runs show --json`: its row; times in RFC 3339 on
// the store clock, null when unset.
type runJSON struct {
	ID          int64           `json:"id"`
	Queue       string          `json:"queue"`
	State       string          `json:"state"`
	Priority    int             `json:"priority"`
	Attempt     int             `json:"attempt"`
	MaxAttempts int             `json:"max_attempts"`
	Snoozes     int             `json:"snoozes"`
	Fence       int64           `json:"fence"`
	Owner       string          `json:"owner"`
	UniqueKey   string          `json:"unique_key"`
	Reason      string          `json:"reason"`
	Payload     json.RawMessage `json:"payload"`
	Result      json.RawMessage `json:"result"`
	ScheduledAt time.Time       `json:"scheduled_at"`
	CreatedAt   time.Time       `json:"created_at"`
	ExpiresAt   *time.Time      `json:"expires_at"`
	FinishedAt  *time.Time      `json:"finished_at"`
	ReclaimedAt *time.Time      `json:"reclaimed_at"`
}

func toRunJSON(r *leasehold.Run) runJSON {
	opt := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		return &t
	}
	raw := func(b []byte) json.RawMessage {
		if len(b) == 0 {
			return json.RawMessage("null")
		}
		return b
	}
	return runJSON{ID: r.ID, Queue: r.Queue, State: string(r.State), Priority: r.Priority, Attempt: r.Attempt,
		MaxAttempts: r.MaxAttempts, Snoozes: r.Snoozes, Fence: r.Fence, Owner: r.Owner, UniqueKey: r.UniqueKey,
		Reason: r.Reason, Payload: raw(r.Payload), Result: raw(r.Result), ScheduledAt: r.ScheduledAt,
		CreatedAt: r.CreatedAt, ExpiresAt: opt(r.ExpiresAt), FinishedAt: opt(r.FinishedAt), ReclaimedAt: opt(r.ReclaimedAt)}
}
