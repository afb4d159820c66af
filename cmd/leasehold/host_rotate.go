package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/journal"
)

// runHostRotateKey is `leasehold host rotate-key`: a node's new ed25519
// key, registered in the store, with the key file swapped
// (host.RotateKey). It names the worlds the node holds under the old key:
// they take the new one at their next grant, so the node's host must be
// restarted with the rotated file (a running host keeps the key it
// loaded).
func runHostRotateKey(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	node := fs.String("node", "", "the node whose key to rotate (required)")
	keyFile := fs.String("key", "", "the node's key file, holding its current key (required): the old key is kept as FILE.v<version>.retired, the new one written in its place")
	cmd.RunE = a.action(func(ctx context.Context, _ []string, out io.Writer) error {
		if *node == "" || *keyFile == "" {
			return usagef("host rotate-key needs --node and --key")
		}
		if err := journal.ValidateID("node", *node); err != nil {
			return err
		}
		return withClient(ctx, open, func(c *leasehold.Client) error {
			r, err := host.RotateKey(ctx, c.Driver(), *node, *keyFile)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "node %s: key version %d retired (its file kept as %s); version %d registered: %s\n",
				r.Node, r.Old.Version, r.RetiredFile, r.New.Version, journal.EncodeKey(r.New.PublicKey))
			held, err := heldUnder(ctx, c, r.Node, r.Old.PublicKey)
			if err != nil {
				return err
			}
			if len(held) > 0 {
				fmt.Fprintf(out, "held under the old key until their next grant: %s\n", strings.Join(held, ", "))
			}
			fmt.Fprintf(out, "restart the node's host with --key %s: a running host still signs with the old key, and every epoch granted from now on refuses it\n", *keyFile)
			return nil
		})
	})
}

// heldUnder lists the worlds node holds under an epoch whose grant
// carries pub.
func heldUnder(ctx context.Context, c *leasehold.Client, node string, pub []byte) ([]string, error) {
	var held []string
	for after := ""; ; {
		ws, err := c.Worlds(ctx, after, 100)
		if err != nil {
			return nil, err
		}
		for _, w := range ws {
			if w.Holder == node && bytes.Equal(w.HolderKey, pub) {
				held = append(held, fmt.Sprintf("%s (epoch %d)", w.World, w.Epoch))
			}
		}
		if len(ws) < 100 {
			return held, nil
		}
		after = ws[len(ws)-1].World
	}
}
