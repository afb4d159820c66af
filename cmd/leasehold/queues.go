package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// runQueues is `leasehold queues ls|pause|resume|limit`: the queue
// registry, as Client.Queues, PauseQueue, ResumeQueue and SetQueueLimits
// see it. `queues` alone lists.
func runQueues(ctx context.Context, args []string, out io.Writer) error {
	sub := "ls"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub, args = args[0], args[1:]
	}
	switch sub {
	case "ls":
		return runQueuesList(ctx, args, out)
	case "pause", "resume":
		return runQueuesPause(ctx, sub, args, out)
	case "limit":
		return runQueuesLimit(ctx, args, out)
	case "help":
		fmt.Fprint(out, queuesUsage)
		return nil
	}
	return fmt.Errorf("unknown subcommand %q (want ls, pause, resume or limit): %w", sub, lease.ErrInvalid)
}

const queuesUsage = `usage: leasehold queues [ls|pause|resume|limit] [flags]

  queues [ls] [--json]               every queue the store knows: paused, limits, runs by state
  queues pause QUEUE                 stop every worker claiming QUEUE's runs (running runs finish)
  queues resume QUEUE                let workers claim QUEUE's runs again
  queues limit QUEUE [--max-running N] [--rate N --per D]
                                     set QUEUE's global limits (0 or absent: no limit)
`

// queueArg parses fs from args, taking the one positional QUEUE wherever
// it stands among the flags.
func queueArg(fs *flag.FlagSet, args []string) (string, error) {
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", fmt.Errorf("%s needs a QUEUE: %w", fs.Name(), lease.ErrInvalid)
	}
	q := fs.Arg(0)
	if err := fs.Parse(fs.Args()[1:]); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("%s takes one QUEUE, got also %q: %w", fs.Name(), fs.Args(), lease.ErrInvalid)
	}
	return q, nil
}

func runQueuesPause(ctx context.Context, sub string, args []string, out io.Writer) error {
	fs := newFlagSet("queues "+sub, out)
	open := storeFlags(fs)
	name, err := queueArg(fs, args)
	if err != nil {
		return err
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	op := c.PauseQueue
	if sub == "resume" {
		op = c.ResumeQueue
	}
	q, err := op(ctx, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "queue %s %sd at %s\n", q.Name, sub, q.UpdatedAt.Format(time.RFC3339Nano))
	return nil
}

func runQueuesLimit(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("queues limit", out)
	open := storeFlags(fs)
	maxRunning := fs.Int("max-running", 0, "at most this many runs running at once across every worker (0: no limit)")
	rate := fs.Int("rate", 0, "at most this many claims per --per (0: no limit)")
	per := fs.Duration("per", 0, "the rate limit's window, 1ms..24h (with --rate)")
	name, err := queueArg(fs, args)
	if err != nil {
		return err
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	q, err := c.SetQueueLimits(ctx, name, leasehold.QueueLimits{MaxRunning: *maxRunning, RateLimit: *rate, RatePeriod: *per})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "queue %s: %s\n", q.Name, limitsText(q))
	return nil
}

// limitsText says a queue's limits in words.
func limitsText(q *leasehold.Queue) string {
	var parts []string
	if q.MaxRunning > 0 {
		parts = append(parts, fmt.Sprintf("at most %d running", q.MaxRunning))
	}
	if q.RateLimit > 0 {
		parts = append(parts, fmt.Sprintf("at most %d starts per %s", q.RateLimit, q.RatePeriod))
	}
	if len(parts) == 0 {
		return "no limits"
	}
	return strings.Join(parts, ", ")
}

// queueJSON is one queue of `queues ls --json`.
type queueJSON struct {
	Name         string           `json:"name"`
	Paused       bool             `json:"paused"`
	MaxRunning   int              `json:"max_running"`    // 0: no limit
	RateLimit    int              `json:"rate_limit"`     // 0: no limit
	RatePeriodMS int64            `json:"rate_period_ms"` // 0 without a rate limit
	Counts       map[string]int64 `json:"counts"`
	CreatedAt    *time.Time       `json:"created_at"` // null: known by its runs only
	UpdatedAt    *time.Time       `json:"updated_at"`
}

func runQueuesList(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("queues ls", out)
	open := storeFlags(fs)
	asJSON := fs.Bool("json", false, "print a JSON array")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("queues ls takes no argument, got %q: %w", fs.Args(), lease.ErrInvalid)
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	qs, err := c.Queues(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		list := make([]queueJSON, 0, len(qs))
		for _, q := range qs {
			j := queueJSON{Name: q.Name, Paused: q.Paused, MaxRunning: q.MaxRunning, RateLimit: q.RateLimit,
				RatePeriodMS: q.RatePeriod.Milliseconds(), Counts: map[string]int64{}}
			for s, n := range q.Counts {
				j.Counts[string(s)] = n
			}
			if !q.CreatedAt.IsZero() {
				j.CreatedAt, j.UpdatedAt = &q.CreatedAt, &q.UpdatedAt
			}
			list = append(list, j)
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if len(qs) == 0 {
		fmt.Fprintln(out, "no queues")
		return nil
	}
	for _, q := range qs {
		state := "active"
		if q.Paused {
			state = "PAUSED"
		}
		fmt.Fprintf(out, "%-24s %-7s %-40s %s\n", q.Name, state, limitsText(q), countsText(q.Counts))
	}
	return nil
}

// countsText lists a queue's runs by state in the states' order.
func countsText(counts map[runs.State]int64) string {
	if len(counts) == 0 {
		return "no runs"
	}
	order := []runs.State{runs.StateAvailable, runs.StateRunning, runs.StateBlocked, runs.StateCompleted, runs.StateFailed, runs.StateCancelled}
	var parts []string
	for _, s := range order {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", s, n))
		}
	}
	for _, s := range slices.Sorted(maps.Keys(counts)) { // a state added later still shows
		if !slices.Contains(order, s) {
			parts = append(parts, fmt.Sprintf("%s %d", s, counts[s]))
		}
	}
	return strings.Join(parts, ", ")
}
