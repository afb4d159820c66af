package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
)

// The tokens commands (`leasehold tokens create|ls|revoke`) manage the
// API's bearer tokens straight in the store --db names, so they work with
// no server running, and against the store a running server reads: a
// server sees a token revoked here within its token cache's lifetime, 5s
// by default.

// scopesHelp says what a --scope may be.
const scopesHelp = "admin | read | work | ACTION:queue:PATTERN | ACTION:world:PATTERN (ACTION read < work < admin; PATTERN a name, prefix*, or *)"

func tokensCreate(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	name := fs.String("name", "", "a label for people (who or what holds the token)")
	scopesP := fs.StringArray("scope", nil, "a scope, repeatable: "+scopesHelp)
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		scopes := *scopesP
		if len(scopes) == 0 {
			return usagef("tokens create needs at least one --scope (e.g. --scope admin, --scope work:queue:emails.*)")
		}
		return withClient(ctx, open, func(c *leasehold.Client) error {
			secret, tok, err := c.CreateToken(ctx, *name, scopes)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "token %s (%s)\n%s\nThe secret is shown this once: the store keeps only its hash. Send it as Authorization: Bearer <secret>.\n",
				tok.ID, strings.Join(tok.Scopes, " "), secret)
			return nil
		})
	})
}

type tokenJSON struct {
	ID        string   `json:"id"`
	Name      string   `json:"name,omitempty"`
	Scopes    []string `json:"scopes"`
	CreatedAt string   `json:"created_at"`
	RevokedAt string   `json:"revoked_at,omitempty"`
}

func tokensList(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	asJSON := fs.Bool("json", false, "machine-readable: one JSON object per line (stable field names)")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		return withClient(ctx, open, func(c *leasehold.Client) error {
			ts, err := c.Tokens(ctx)
			if err != nil {
				return err
			}
			stamp := func(t time.Time) string {
				if t.IsZero() {
					return ""
				}
				return t.UTC().Format(time.RFC3339)
			}
			enc := json.NewEncoder(out)
			for _, t := range ts {
				if *asJSON {
					if err := enc.Encode(tokenJSON{ID: t.ID, Name: t.Name, Scopes: t.Scopes, CreatedAt: stamp(t.CreatedAt), RevokedAt: stamp(t.RevokedAt)}); err != nil {
						return err
					}
					continue
				}
				state := "live"
				if t.Revoked() {
					state = "revoked " + stamp(t.RevokedAt)
				}
				fmt.Fprintf(out, "%-21s %-20q %-30s created %s  %s\n", t.ID, t.Name, strings.Join(t.Scopes, " "), stamp(t.CreatedAt), state)
			}
			return nil
		})
	})
}

func tokensRevoke(a *app, cmd *cobra.Command) {
	open := storeFlags(cmd.Flags())
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		return withClient(ctx, open, func(c *leasehold.Client) error {
			tok, err := c.RevokeToken(ctx, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "token %s revoked at %s\n", tok.ID, tok.RevokedAt.UTC().Format(time.RFC3339))
			return nil
		})
	})
}

// bootstrapToken mints an admin token when the store has no live token,
// so a zero-flag `leasehold serve` is usable at once: its secret is
// printed once, on the server's output. With any live token in the store
// it mints nothing.
func bootstrapToken(ctx context.Context, c *leasehold.Client, out io.Writer) error {
	ts, err := c.Tokens(ctx)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if !t.Revoked() {
			return nil
		}
	}
	secret, tok, err := c.CreateToken(ctx, "bootstrap admin (minted by leasehold serve)", []string{"admin"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "leasehold serve: the store had no live token; minted admin token %s (shown once, keep it):\nadmin token: %s\n", tok.ID, secret)
	return nil
}
