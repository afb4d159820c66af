package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

func runMigrate(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("migrate", out)
	storeFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The driver alone: a client with SkipMigrate refuses the very store
	// this command is for (ErrNotMigrated), and one without would migrate
	// before it could report what it applied.
	d, err := openDriver(ctx, fs.Lookup("db").Value.String())
	if err != nil {
		return err
	}
	defer d.Close()
	res, err := d.Migrate(ctx)
	if err != nil {
		return err
	}
	if len(res.Applied) == 0 {
		fmt.Fprintf(out, "schema is current at version %d\n", res.Version)
		return nil
	}
	fmt.Fprintf(out, "applied migrations %v; schema at version %d\n", res.Applied, res.Version)
	return nil
}

func runWorlds(ctx context.Context, args []string, out io.Writer) error {
	if len(args) > 0 {
		if sub, ok := worldsCommands[args[0]]; ok {
			return sub(ctx, args[1:], out)
		}
	}
	fs := newFlagSet("worlds", out)
	open := storeFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	after := ""
	for {
		ws, err := c.Worlds(ctx, after, 100)
		if err != nil {
			return err
		}
		for _, w := range ws {
			holder, until := w.Holder, ""
			if holder == "" {
				holder = "(revoked)"
			} else {
				until = " until " + w.ExpiresAt.Format(time.RFC3339)
			}
			fmt.Fprintf(out, "%-24s position %-6d epoch %-4d %s%s\n", w.World, w.Position, w.Epoch, holder, until)
		}
		if len(ws) < 100 {
			return nil
		}
		after = ws[len(ws)-1].World
	}
}

func runSweep(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("sweep", out)
	open := storeFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	n, err := c.SweepExpired(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "swept %d expired leases\n", n)
	return nil
}
