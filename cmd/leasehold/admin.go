package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
)

// runMigrate is `leasehold migrate`: apply the pending schema migrations
// and say which.
func runMigrate(a *app, cmd *cobra.Command) {
	db := dbFlag(cmd.Flags())
	cmd.RunE = a.action(func(ctx context.Context, _ []string, out io.Writer) error {
		// The driver alone: a client with SkipMigrate refuses the very
		// store this command is for (ErrNotMigrated), and one without
		// would migrate before it could report what it applied.
		d, err := openDriver(ctx, *db)
		if err != nil {
			return err
		}
		defer d.Close()
		// A spinner: Driver.Migrate applies every pending migration in
		// one call and reports none of them as it goes.
		bar := a.progress(-1, "migrating "+describeStore(*db))
		res, err := d.Migrate(ctx)
		endBar(bar)
		if err != nil {
			return err
		}
		if len(res.Applied) == 0 {
			fmt.Fprintf(out, "schema is current at version %d\n", res.Version)
			return nil
		}
		fmt.Fprintf(out, "applied migrations %v; schema at version %d\n", res.Applied, res.Version)
		return nil
	})
}

// runSweep is `leasehold sweep`: one pass of the world expiry sweep.
func runSweep(a *app, cmd *cobra.Command) {
	open := storeFlags(cmd.Flags())
	cmd.RunE = a.action(func(ctx context.Context, _ []string, out io.Writer) error {
		return withClient(ctx, open, func(c *leasehold.Client) error {
			n, err := c.SweepExpired(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "swept %d expired leases\n", n)
			return nil
		})
	})
}
