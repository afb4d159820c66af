package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/runs"
)

// queuesCommand is `leasehold queues [ls]|pause|resume|limit`: the queue
// registry, as Client.Queues, PauseQueue, ResumeQueue and SetQueueLimits
// see it. `queues` alone lists.
func queuesCommand(a *app) *cobra.Command {
	queues := a.command("queues", "list queues with their runs by state; pause, resume, limit", noArgs, runQueuesList)
	queues.AddCommand(
		a.command("ls", "every queue the store knows: paused, limits, runs by state", noArgs, runQueuesList),
		a.command("pause QUEUE", "stop every worker claiming QUEUE's runs (running runs finish)", queueArg, runQueuesPause("pause")),
		a.command("resume QUEUE", "let workers claim QUEUE's runs again", queueArg, runQueuesPause("resume")),
		a.command("limit QUEUE", "set QUEUE's global limits: --max-running N, --rate N --per D (0 or absent: no limit)", queueArg, runQueuesLimit),
	)
	addHelpSubcommand(queues)
	return queues
}

// queueArg is the one positional QUEUE.
func queueArg(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usagef("%s needs a QUEUE", cmd.CommandPath())
	}
	if len(args) > 1 {
		return usagef("%s takes one QUEUE, got also %q", cmd.CommandPath(), args[1:])
	}
	return nil
}

// runQueuesPause is `queues pause QUEUE` or, with sub "resume", `queues resume QUEUE`.
func runQueuesPause(sub string) func(*app, *cobra.Command) {
	return func(a *app, cmd *cobra.Command) {
		open := storeFlags(cmd.Flags())
		cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
			return withClient(ctx, open, func(c *leasehold.Client) error {
				op := c.PauseQueue
				if sub == "resume" {
					op = c.ResumeQueue
				}
				q, err := op(ctx, args[0])
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "queue %s %sd at %s\n", q.Name, sub, q.UpdatedAt.Format(time.RFC3339Nano))
				return nil
			})
		})
	}
}

// runQueuesLimit is `queues limit QUEUE`: the queue's global limits, 0 for none.
func runQueuesLimit(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	maxRunning := fs.Int("max-running", 0, "at most this many runs running at once across every worker (0: no limit)")
	rate := fs.Int("rate", 0, "at most this many claims per --per (0: no limit)")
	per := fs.Duration("per", 0, "the rate limit's window, 1ms..24h (with --rate)")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		return withClient(ctx, open, func(c *leasehold.Client) error {
			q, err := c.SetQueueLimits(ctx, args[0], leasehold.QueueLimits{MaxRunning: *maxRunning, RateLimit: *rate, RatePeriod: *per})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "queue %s: %s\n", q.Name, limitsText(q))
			return nil
		})
	})
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

// runQueuesList is `queues [ls]`: every queue with its limits and runs by state.
func runQueuesList(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	asJSON := jsonFlag(fs)
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
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
	})
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
