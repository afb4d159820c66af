package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
)

// enqueueBatch is how many runs one Client.Enqueue call of `enqueue
// --count N` carries: one statement and one commit per batch, so a bulk
// enqueue costs N/1000 round trips, and the progress bar moves per batch.
const enqueueBatch = 1000

// enqueuedJSON is one run of `enqueue --json`: the run's row (the fields
// of `runs ls --json`) and whether its unique key returned an existing run.
type enqueuedJSON struct {
	runJSON
	Existing bool `json:"existing"`
}

// runEnqueue is `leasehold enqueue --queue Q`: one run, or --count N
// identical ones in batches. The input is validated by the library
// (runs.ValidateEnqueue), where it enters, and refused with ErrInvalid:
// exit 2, nothing written.
func runEnqueue(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	queue := fs.String("queue", "", "the queue (required)")
	payload := fs.String("payload", "", "the run's payload, JSON (default: none)")
	priority := fs.Int("priority", 0, "0..1000, lower is claimed first")
	delay := fs.Duration("delay", 0, "run no earlier than the store's now + this")
	maxAttempts := fs.Int("max-attempts", 0, "attempts before the run fails for good (0: the default, 25)")
	uniqueKey := fs.String("unique-key", "", "a second enqueue with the same key returns the first run (with --count 1 only)")
	count := fs.Int("count", 1, "enqueue this many identical runs, in batches of 1000 (a progress bar on a terminal)")
	asJSON := fs.Bool("json", false, "machine-readable: a JSON array of the runs enqueued (the fields of `runs ls --json`, and existing)")
	cmd.RunE = a.action(func(ctx context.Context, _ []string, out io.Writer) error {
		if *queue == "" {
			return usagef("enqueue needs --queue")
		}
		if *count < 1 || *count > 10_000_000 {
			return usagef("--count %d: want 1..10000000", *count)
		}
		if *count > 1 && *uniqueKey != "" {
			return usagef("--unique-key with --count %d: every run after the first would return the first", *count)
		}
		e := leasehold.Enqueue{Queue: *queue, Priority: *priority, Delay: *delay, MaxAttempts: *maxAttempts, UniqueKey: *uniqueKey}
		if *payload != "" {
			e.Payload = []byte(*payload)
		}
		// A batch's payloads together stay under the driver's per-call cap.
		batch := max(1, min(enqueueBatch, driver.MaxBatchPayloadBytes/max(1, len(e.Payload))))
		return withClient(ctx, open, func(c *leasehold.Client) error {
			bar := progressbar.DefaultSilent(int64(*count)) // one call: nothing to watch
			if *count > enqueueBatch {
				bar = a.progress(int64(*count), "enqueue "+*queue)
			}
			defer endBar(bar)
			var done []leasehold.Enqueued
			for left := *count; left > 0; {
				n := min(left, batch)
				items := make([]leasehold.Enqueue, n)
				for i := range items {
					items[i] = e
				}
				got, err := c.Enqueue(ctx, items...)
				if err != nil {
					if len(done) > 0 {
						return fmt.Errorf("after %d runs enqueued: %w", len(done), err)
					}
					return err
				}
				done = append(done, got...)
				left -= n
				_ = bar.Add(n)
			}
			_ = bar.Finish()
			if *asJSON {
				list := make([]enqueuedJSON, 0, len(done))
				for _, r := range done {
					list = append(list, enqueuedJSON{toRunJSON(r.Run), r.Existing})
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(done) == 1 {
				r := done[0]
				if r.Existing {
					fmt.Fprintf(out, "run %d on %s exists already under unique key %q (%s)\n", r.Run.ID, r.Run.Queue, r.Run.UniqueKey, r.Run.State)
					return nil
				}
				fmt.Fprintf(out, "enqueued run %d on %s\n", r.Run.ID, r.Run.Queue)
				return nil
			}
			fmt.Fprintf(out, "enqueued %d runs on %s: ids %d..%d\n", len(done), *queue, done[0].Run.ID, done[len(done)-1].Run.ID)
			return nil
		})
	})
}
