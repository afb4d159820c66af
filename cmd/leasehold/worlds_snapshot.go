package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/lease"
)

// runWorldsSnapshot is `leasehold worlds snapshot WORLD`: the world's
// snapshot written now, through the store (host.TakeSnapshot), so an
// operator can spare the next node that prepares a big world its replay
// without waiting for the holder's next one, or seed one for a world no
// host holds. A fold that races a grant is fenced and writes nothing
// (exit 4): run it again.
func runWorldsSnapshot(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	prog := fs.String("program", "bank", "the program the world runs: bank or kv")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		p, ok := programsByName[*prog]
		if !ok {
			return fmt.Errorf("--program %q: unknown program (have: bank, kv): %w", *prog, lease.ErrInvalid)
		}
		return withClient(ctx, open, func(c *leasehold.Client) error {
			pos, wrote, err := host.TakeSnapshot(ctx, c.Driver(), p, args[0])
			if err != nil {
				return err
			}
			if !wrote {
				fmt.Fprintf(out, "world %s: the stored snapshot is at the head already (position %d): nothing written\n", args[0], pos)
				return nil
			}
			fmt.Fprintf(out, "world %s: snapshot of %s written at position %d\n", args[0], p.Name(), pos)
			return nil
		})
	})
}

// printSnapshot is `worlds show`'s snapshot line: the newest snapshot's
// position (what a node preparing the world restores before replaying
// the rest), or that there is none.
func printSnapshot(ctx context.Context, out io.Writer, c *leasehold.Client, world string) error {
	ss, ok := c.Driver().(driver.SnapshotStore)
	if !ok {
		return nil
	}
	s, err := ss.WorldSnapshotGet(ctx, &driver.WorldSnapshotGetParams{World: world})
	if errors.Is(err, lease.ErrNotFound) {
		fmt.Fprintf(out, "snapshot: none (a node preparing the world replays it from position 1)\n")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "snapshot: position %d (program %s, %d bytes, taken %s)\n", s.Position, s.Program, len(s.Data), s.TakenAt.Format(time.RFC3339Nano))
	return nil
}
