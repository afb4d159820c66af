package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/leasehold/leasehold"
)

// runTokens is `leasehold tokens create|ls|revoke`: the API's bearer
// tokens, straight in the store --db names (so it works with no server
// running, and against the store a running server reads: a server sees a
// token revoked here within its token cache's lifetime, 5s by default).
const tokensUsage = "usage: leasehold tokens create --scope S [--scope S …] [--name N] | ls [--json] | revoke ID  (each with --db)"

func runTokens(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(tokensUsage)
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprintln(out, tokensUsage)
		fmt.Fprintln(out, "scopes: admin | read | work | ACTION:queue:PATTERN | ACTION:world:PATTERN (ACTION read < work < admin; PATTERN a name, prefix*, or *)")
		return nil
	case "create":
		return tokensCreate(ctx, args[1:], out)
	case "ls", "list":
		return tokensList(ctx, args[1:], out)
	case "revoke":
		return tokensRevoke(ctx, args[1:], out)
	}
	return fmt.Errorf("unknown tokens command %q (create, ls, revoke)", args[0])
}

// scopeFlags is a repeatable --scope.
type scopeFlags []string

func (s *scopeFlags) String() string     { return strings.Join(*s, ",") }
func (s *scopeFlags) Set(v string) error { *s = append(*s, v); return nil }

func tokensCreate(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("tokens create", out)
	open := storeFlags(fs)
	name := fs.String("name", "", "a label for people (who or what holds the token)")
	var scopes scopeFlags
	fs.Var(&scopes, "scope", "a scope, repeatable: admin | read | work | ACTION:queue:PATTERN | ACTION:world:PATTERN (PATTERN: name, prefix*, or *)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(scopes) == 0 {
		return errors.New("tokens create needs at least one --scope (e.g. --scope admin, --scope work:queue:emails.*)")
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	secret, tok, err := c.CreateToken(ctx, *name, scopes)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "token %s (%s)\n%s\nThe secret is shown this once: the store keeps only its hash. Send it as Authorization: Bearer <secret>.\n",
		tok.ID, strings.Join(tok.Scopes, " "), secret)
	return nil
}

type tokenJSON struct {
	ID        string   `json:"id"`
	Name      string   `json:"name,omitempty"`
	Scopes    []string `json:"scopes"`
	CreatedAt string   `json:"created_at"`
	RevokedAt string   `json:"revoked_at,omitempty"`
}

func tokensList(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("tokens ls", out)
	open := storeFlags(fs)
	asJSON := fs.Bool("json", false, "one JSON object per line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
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
}

func tokensRevoke(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("tokens revoke", out)
	open := storeFlags(fs)
	// The id may come before or after the flags.
	var ids []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		ids, args = append(ids, fs.Arg(0)), fs.Args()[1:]
	}
	if len(ids) != 1 {
		return errors.New("usage: leasehold tokens revoke [--db …] ID")
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	tok, err := c.RevokeToken(ctx, ids[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "token %s revoked at %s\n", tok.ID, tok.RevokedAt.UTC().Format(time.RFC3339))
	return nil
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
