package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
)

// runDemo is `leasehold demo`: the README's tour of the fenced journal, audited.
func runDemo(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	id := fs.String("world", "", "world id (default demo-<unix time>)")
	hosts := fs.Bool("hosts", true, "also run the world-host act: a hot world spilled by the band and brought home")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		if *id == "" {
			*id = fmt.Sprintf("demo-%d", time.Now().Unix())
		}
		c, err := open(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		s, err := c.Settings(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "store: %s %v\n\n", s.Driver, s.Values)

		w, err := c.CreateWorld(ctx, *id, "home-1")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "1. created world %s: epoch %d held by %s until %s (store clock)\n", w.World, w.Epoch, w.Holder, w.ExpiresAt.Format(time.RFC3339))

		appendAs := func(holder string, epoch, seen int64, kind, payload string) (int64, error) {
			return c.Append(ctx, leasehold.AppendParams{World: *id, Holder: holder, Epoch: epoch, SeenPosition: seen, Kind: kind, Payload: []byte(payload)})
		}
		for i := 1; i <= 3; i++ {
			pos, err := appendAs("home-1", w.Epoch, w.GrantedAt, "order.placed", fmt.Sprintf(`{"order":%d}`, i))
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "2. home-1 appended order %d at position %d\n", i, pos)
		}

		old := w.Epoch
		if w, err = c.Handoff(ctx, *id, "home-1", "node-a", w.Epoch); err != nil {
			return err
		}
		fmt.Fprintf(out, "3. home-1 handed the lease to node-a: epoch %d, granted at position %d\n", w.Epoch, w.GrantedAt)
		pos, err := appendAs("node-a", w.Epoch, w.GrantedAt, "order.shipped", `{"order":1}`)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "4. node-a appended at position %d\n", pos)

		_, err = appendAs("home-1", old, w.GrantedAt, "order.placed", `{"order":99}`)
		if !errors.Is(err, leasehold.ErrFenced) {
			return fmt.Errorf("expected the zombie write to be fenced, got %v", err)
		}
		fmt.Fprintf(out, "5. home-1 writing under its old epoch %d is refused: %v\n", old, err)

		if w, err = c.Handoff(ctx, *id, "node-a", "home-1", w.Epoch); err != nil {
			return err
		}
		fmt.Fprintf(out, "6. node-a handed the lease back: epoch %d held by %s\n", w.Epoch, w.Holder)
		if pos, err = appendAs("home-1", w.Epoch, w.GrantedAt, "order.closed", `{"order":1}`); err != nil {
			return err
		}
		fmt.Fprintf(out, "7. home-1 appended at position %d\n\n", pos)

		rep, err := c.Audit(ctx, *id)
		if err != nil {
			return err
		}
		printReport(out, rep, true)
		if !rep.OK() {
			return reportedFailure{}
		}
		if *hosts {
			fmt.Fprintln(out)
			if err := demoHost(ctx, out, c, *id+"-hot"); err != nil {
				return err
			}
		}
		fmt.Fprintf(out, "\nnext: leasehold export --world %s > %s.jsonl && leasehold audit --file %s.jsonl\n", *id, *id, *id)
		return nil
	})
}
