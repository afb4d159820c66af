package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/lease"
)

// worldsCommand is `leasehold worlds [ls]|show|submit|spill|handback|revoke`;
// `worlds` alone lists the worlds and their leases.
func worldsCommand(a *app) *cobra.Command {
	worlds := a.command("worlds", "list worlds and their leases; show, submit, spill, handback, revoke, snapshot", noArgs, runWorldsList)
	worlds.AddCommand(
		a.command("ls", "list worlds and their leases", noArgs, runWorldsList),
		a.command("show", "the head, the home and the last entries of a world (--world W)", noArgs, runWorldsShow),
		a.command("submit", "send a command to the world's holder and print the reply (--world W --key K --payload JSON, --host URL | --hosts node=URL,...)", noArgs, runWorldsSubmit),
		a.command("spill", "hand the world from its holder to --to NODE (a host of --hosts)", noArgs, moveWorld(false)),
		a.command("handback", "hand the world from its holder back to its home (--hosts node=URL,...)", noArgs, moveWorld(true)),
		a.command("revoke", "end the current epoch through the store's grant path (operator; --world W --reason R)", noArgs, runWorldsRevoke),
		a.command("snapshot WORLD", "write the world's snapshot now: fold its journal with --program and store the state (no holder needed)", oneArg("world"), runWorldsSnapshot),
	)
	worlds.Example = `  leasehold worlds [--json]                        list worlds and their leases
  leasehold worlds show --world W                  the head, the home and the last entries of a world
  leasehold worlds submit --world W --key K --payload JSON (--host URL | --hosts node=URL,...)
  leasehold worlds spill --world W --to NODE --hosts node=URL,...
  leasehold worlds handback --world W --hosts node=URL,...
  leasehold worlds revoke --world W --reason R
  leasehold worlds snapshot W [--program bank|kv]  write the world's snapshot now`
	addHelpSubcommand(worlds)
	return worlds
}

// worldJSON is one world of `worlds ls --json`.
type worldJSON struct {
	World     string     `json:"world"`
	Position  int64      `json:"position"`
	Epoch     int64      `json:"epoch"`
	Holder    string     `json:"holder"`     // "": revoked, nobody holds it
	ExpiresAt *time.Time `json:"expires_at"` // null when revoked
	GrantedAt int64      `json:"granted_at"`
	Home      string     `json:"home"`
}

// runWorldsList is `leasehold worlds [ls]`: every world, a page of 100 at
// a time from the store.
func runWorldsList(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	asJSON := jsonFlag(fs)
	cmd.RunE = a.action(func(ctx context.Context, _ []string, out io.Writer) error {
		return withClient(ctx, open, func(c *leasehold.Client) error {
			list := []worldJSON{}
			for after := ""; ; {
				ws, err := c.Worlds(ctx, after, 100)
				if err != nil {
					return err
				}
				for _, w := range ws {
					if *asJSON {
						j := worldJSON{World: w.World, Position: w.Position, Epoch: w.Epoch, Holder: w.Holder, GrantedAt: w.GrantedAt, Home: w.Home}
						if w.Holder != "" {
							j.ExpiresAt = &w.ExpiresAt
						}
						list = append(list, j)
						continue
					}
					holder, until := w.Holder, ""
					if holder == "" {
						holder = "(revoked)"
					} else {
						until = " until " + w.ExpiresAt.Format(time.RFC3339)
					}
					fmt.Fprintf(out, "%-24s position %-6d epoch %-4d %s%s\n", w.World, w.Position, w.Epoch, holder, until)
				}
				if len(ws) < 100 {
					break
				}
				after = ws[len(ws)-1].World
			}
			if *asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			return nil
		})
	})
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

func runWorldsShow(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	id := fs.String("world", "", "world id (required)")
	n := fs.Int("tail", 10, "entries of the journal's tail to print")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
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
		if err := printSnapshot(ctx, out, c, *id); err != nil {
			return err
		}
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
	})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func runWorldsSubmit(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	id := fs.String("world", "", "world id (required)")
	key := fs.String("key", "", "the command's idempotency key (required)")
	payload := fs.String("payload", "", "the command, JSON (required)")
	one := fs.String("host", "", "a host's URL: submit to it directly")
	hostsArg := fs.String("hosts", "", "node=URL,…: route to the world's holder among these hosts")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
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
	})
}

// moveWorld is `worlds spill` (to --to) or `worlds handback` (to the
// world's home): a handoff from the holder through the hosts' APIs.
func moveWorld(handback bool) func(*app, *cobra.Command) {
	return func(a *app, cmd *cobra.Command) {
		fs := cmd.Flags()
		open := storeFlags(fs)
		id := fs.String("world", "", "world id (required)")
		to := new(string)
		if !handback {
			to = fs.String("to", "", "the node to hand the world to (a host of --hosts)")
		}
		hostsArg := fs.String("hosts", "", "node=URL,…: the hosts involved (required)")
		cmd.RunE = a.action(func(ctx context.Context, _ []string, out io.Writer) error {
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
		})
	}
}

func runWorldsRevoke(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	open := storeFlags(fs)
	id := fs.String("world", "", "world id (required)")
	reason := fs.String("reason", "operator", "the reason journaled with lease.revoked")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
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
	})
}
