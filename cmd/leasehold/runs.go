package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// runRuns is `leasehold runs [ls]`: a page of runs by id, filtered by
// queue and state (Client.Runs). The next page is --after the last id
// printed; a page shorter than --limit is the last.
func runRuns(ctx context.Context, args []string, out io.Writer) error {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if args[0] != "ls" {
			return fmt.Errorf("unknown subcommand %q (want ls): %w", args[0], lease.ErrInvalid)
		}
		args = args[1:]
	}
	fs := newFlagSet("runs ls", out)
	open := storeFlags(fs)
	queue := fs.String("queue", "", "only runs of this queue")
	state := fs.String("state", "", "only runs in this state: available, running, blocked, completed, failed, cancelled")
	after := fs.Int64("after", 0, "only runs with an id above this (the last id of the previous page)")
	limit := fs.Int("limit", 100, "runs per page, at most 1000")
	asJSON := fs.Bool("json", false, "print a JSON array")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("runs ls takes no argument, got %q: %w", fs.Args(), lease.ErrInvalid)
	}
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
}

// runJSON is one run of `runs ls --json`: its row; times in RFC 3339 on
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
