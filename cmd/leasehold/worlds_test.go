package main

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
)

// TestWorldsSubcommandsDriveHosts: submit, spill, handback and revoke
// through two hosts' HTTP APIs on one embedded store, and the typed
// refusals of bad input (an unknown spill target, an unknown program).
func TestWorldsSubcommandsDriveHosts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "lh.db")
	d, err := sqlite.Open(ctx, sqlite.Config{Path: db})
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	var urls []string
	for _, node := range []string{"home-1", "spill-1"} {
		h, err := host.New(host.Config{Store: d, Node: node, Program: programs.Bank{}})
		require.NoError(t, err)
		defer h.Stop(ctx)
		srv := httptest.NewServer(host.Handler(h))
		defer srv.Close()
		urls = append(urls, node+"="+srv.URL)
		if node == "home-1" {
			require.NoError(t, h.Create(ctx, "acct"))
		}
	}
	hosts := strings.Join(urls, ",")
	run := func(want int, args ...string) string {
		out, code := cli(t, append(args, "--db", db)...)
		require.Equal(t, want, code, out)
		return out
	}
	require.Contains(t, run(0, "worlds", "submit", "--world", "acct", "--key", "k1", "--payload", `{"op":"deposit","account":"a","amount":5}`, "--hosts", hosts), `"balance":5`)
	require.Contains(t, run(0, "worlds", "spill", "--world", "acct", "--to", "spill-1", "--hosts", hosts), "handed from home-1 to spill-1")
	require.Contains(t, run(0, "worlds", "submit", "--world", "acct", "--key", "k1", "--payload", `{"op":"deposit","account":"a","amount":5}`, "--hosts", hosts), "a retry")
	require.Contains(t, run(exitConflict, "worlds", "submit", "--world", "acct", "--key", "k1", "--payload", `{"op":"deposit","account":"a","amount":6}`, "--hosts", hosts), "different payload")
	require.Contains(t, run(exitUsage, "worlds", "spill", "--world", "acct", "--to", "nobody", "--hosts", hosts), "invalid input")
	require.Contains(t, run(0, "worlds", "handback", "--world", "acct", "--hosts", hosts), "handed from spill-1 to home-1")
	require.Contains(t, run(0, "worlds", "show", "--world", "acct"), "held by home-1")
	require.Contains(t, run(0, "audit", "--world", "acct"), "OK: hash chain verified")
	require.Contains(t, run(0, "worlds", "revoke", "--world", "acct", "--reason", "maintenance"), "revoked (maintenance)")
	require.Contains(t, run(exitUsage, "host", "--node", "x", "--program", "nope"), "unknown program")
	loose := filepath.Join(t.TempDir(), "node.key")
	_, err = host.LoadOrCreateKey(loose)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(loose, 0o644))
	require.Contains(t, run(exitUsage, "host", "--node", "x", "--key", loose), "mode 0644 lets others read the key")
	require.Contains(t, run(exitUsage, "host", "--node", "x", "--effects-url", "ftp://x"), "an http:// or https:// URL is required")
	require.Contains(t, run(0, "worlds", "help"), "worlds spill")
}
