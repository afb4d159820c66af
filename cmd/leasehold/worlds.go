package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/lease"
)

// worldsCommands are the `leasehold worlds` subcommands; `worlds` alone
// lists the worlds.
var worldsCommands map[string]func(context.Context, []string, io.Writer) error

func init() {
	worldsCommands = map[string]func(context.Context, []string, io.Writer) error{
		"show":     runWorldsShow,
		"submit":   runWorldsSubmit,
		"spill":    runWorldsSpill,
		"handback": runWorldsHandback,
		"revoke":   runWorldsRevoke,
		"help":     runWorldsHelp,
	}
}

func runWorldsHelp(_ context.Context, _ []string, out io.Writer) error {
	fmt.Fprint(out, `usage: leasehold worlds [show|submit|spill|handback|revoke] [flags]

  worlds                                   list worlds and their leases
  worlds show --world W                    the head, the home and the last entries of a world
  worlds submit --world W --key K --payload JSON (--host URL | --hosts node=URL,...)
                                           send a command to the world's holder and print the reply
  worlds spill --world W --to NODE --hosts node=URL,...
                                           hand the world from its holder to NODE (a host of --hosts)
  worlds handback --world W --hosts node=URL,...
                                           hand the world from its holder back to its home
  worlds revoke --world W --reason R       end the current epoch through the store's grant path (operator)
`)
	return nil
}

// hostsFlag parses --hosts "node=URL,node=URL" into remote peers.
func hostsFlag(s string) (map[string]*host.Remote, error) {
	out := map[string]*host.Remote{}
	client := &http.Client{Timeout: 30 * time.Second}
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		node, url, ok := strings.Cut(kv, "=")
		if !ok || node == "" || !strings.HasPrefix(url, "http") {
			return nil, fmt.Errorf("--hosts: %q is not node=http://address: %w", kv, lease.ErrInvalid)
		}
		out[node] = host.NewRemote(node, strings.TrimRight(url, "/"), client)
	}
	return out, nil
}

func router(c *leasehold.Client, hosts map[string]*host.Remote) *host.Router {
	r := host.NewRouter(c.Driver())
	for _, h := range hosts {
		r.Add(h)
	}
	return r
}

func runWorldsShow(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("worlds show", out)
	open := storeFlags(fs)
	id := fs.String("world", "", "world id (required)")
	n := fs.Int("tail", 10, "entries of the journal's tail to print")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	w, err := c.World(ctx, *id)
	if err != nil {
		return err
	}
	holder := w.Holder
	if holder == "" {
		holder = "(nobody: revoked)"
	}
	fmt.Fprintf(out, "world %s: position %d, epoch %d held by %s until %s, granted at %d; home %s\n",
		w.World, w.Position, w.Epoch, holder, w.ExpiresAt.Format(time.RFC3339Nano), w.GrantedAt, w.Home)
	from := max(w.Position-int64(*n)+1, 1)
	es, err := c.Read(ctx, *id, from, *n)
	if err != nil {
		return err
	}
	for _, e := range es {
		key := ""
		if e.Key != "" {
			key = " key " + e.Key
		}
		fmt.Fprintf(out, "  %6d  %-18s epoch %-4d %-12s%s  %s\n", e.Position, e.Kind, e.Epoch, e.Holder, key, truncate(string(e.Payload), 100))
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func runWorldsSubmit(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("worlds submit", out)
	open := storeFlags(fs)
	id := fs.String("world", "", "world id (required)")
	key := fs.String("key", "", "the command's idempotency key (required)")
	payload := fs.String("payload", "", "the command, JSON (required)")
	one := fs.String("host", "", "a host's URL: submit to it directly")
	hostsArg := fs.String("hosts", "", "node=URL,…: route to the world's holder among these hosts")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cmd := host.Command{Key: *key, Payload: json.RawMessage(*payload)}
	var rep host.Reply
	var err error
	if *one != "" {
		rep, err = host.NewRemote("", strings.TrimRight(*one, "/"), nil).Submit(ctx, *id, cmd)
	} else {
		hosts, herr := hostsFlag(*hostsArg)
		if herr != nil {
			return herr
		}
		if len(hosts) == 0 {
			return fmt.Errorf("--host or --hosts is required: %w", lease.ErrInvalid)
		}
		c, cerr := open(ctx)
		if cerr != nil {
			return cerr
		}
		defer c.Close()
		rep, err = router(c, hosts).Submit(ctx, *id, cmd)
	}
	if err != nil {
		return err
	}
	dup := ""
	if rep.Duplicate {
		dup = " (a retry: the first application's reply)"
	}
	fmt.Fprintf(out, "position %d%s: %s\n", rep.Position, dup, rep.Payload)
	return nil
}

func moveWorld(ctx context.Context, args []string, out io.Writer, handback bool) error {
	name := "worlds spill"
	if handback {
		name = "worlds handback"
	}
	fs := newFlagSet(name, out)
	open := storeFlags(fs)
	id := fs.String("world", "", "world id (required)")
	to := fs.String("to", "", "the node to hand the world to (spill; a host of --hosts)")
	hostsArg := fs.String("hosts", "", "node=URL,…: the hosts involved (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	hosts, err := hostsFlag(*hostsArg)
	if err != nil {
		return err
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	w, err := c.World(ctx, *id)
	if err != nil {
		return err
	}
	target := *to
	if handback {
		target = w.Home
	}
	if w.Holder == "" {
		return fmt.Errorf("world %s: nobody holds it (epoch %d revoked): %w", *id, w.Epoch, lease.ErrNotHolder)
	}
	for _, n := range []string{w.Holder, target} {
		if hosts[n] == nil {
			return fmt.Errorf("world %s: %q is not one of --hosts: %w", *id, n, lease.ErrInvalid)
		}
	}
	if target == w.Holder {
		return fmt.Errorf("world %s: %s holds it already: %w", *id, target, lease.ErrInvalid)
	}
	if err := router(c, hosts).Handoff(ctx, *id, w.Holder, target); err != nil {
		return err
	}
	after, err := c.World(ctx, *id)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "world %s: handed from %s to %s: epoch %d, granted at position %d\n", *id, w.Holder, after.Holder, after.Epoch, after.GrantedAt)
	return nil
}

func runWorldsSpill(ctx context.Context, args []string, out io.Writer) error {
	return moveWorld(ctx, args, out, false)
}

func runWorldsHandback(ctx context.Context, args []string, out io.Writer) error {
	return moveWorld(ctx, args, out, true)
}

func runWorldsRevoke(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("worlds revoke", out)
	open := storeFlags(fs)
	id := fs.String("world", "", "world id (required)")
	reason := fs.String("reason", "operator", "the reason journaled with lease.revoked")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := open(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	w, err := c.World(ctx, *id)
	if err != nil {
		return err
	}
	after, err := c.Revoke(ctx, *id, w.Epoch, *reason)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "world %s: epoch %d of %s revoked (%s) at position %d; the sweep grants the home the next epoch\n",
		*id, w.Epoch, w.Holder, *reason, after.Position)
	return nil
}
