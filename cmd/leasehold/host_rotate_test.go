package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// TestHostRotateKeyMidJournal: on each store, a node rotates its key in
// the middle of a world's journal with `host rotate-key`. The epoch it
// holds keeps its grant's (old) key; the next grant carries the new one,
// the node's restarted host signs with it, a batch signed with the retired
// key after that is refused, and `leasehold audit` verifies the whole
// journal, each epoch under its own key. The retired key cannot come back
// (a host started with it fails), and a rotation from a file that is not
// the node's current key, of an unknown node or of no file changes
// nothing.
func TestHostRotateKeyMidJournal(t *testing.T) {
	t.Parallel()
	for name, db := range testStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dir := t.TempDir()
			keyFile := filepath.Join(dir, "n1.key")
			k1, err := host.LoadOrCreateKey(keyFile)
			require.NoError(t, err)
			d, err := openDriver(ctx, db)
			require.NoError(t, err)
			defer d.Close()
			_, err = d.Migrate(ctx)
			require.NoError(t, err)
			submit := func(h *host.Host, key string) {
				t.Helper()
				_, err := h.Submit(ctx, "acct", host.Command{Key: key, Payload: json.RawMessage(`{"op":"deposit","account":"a","amount":1}`)})
				require.NoError(t, err)
			}
			h1, err := host.New(host.Config{Store: d, Node: "n1", Program: programs.Bank{}, Key: k1, SnapshotEvery: -1})
			require.NoError(t, err)
			defer h1.Stop(ctx)
			require.NoError(t, h1.Create(ctx, "acct"))
			for i := range 3 {
				submit(h1, fmt.Sprintf("before-%d", i))
			}
			run := func(want int, args ...string) string {
				t.Helper()
				out, code := cli(t, append(args, "--db", db)...)
				require.Equal(t, want, code, out)
				return out
			}

			out := run(0, "host", "rotate-key", "--node", "n1", "--key", keyFile)
			require.Contains(t, out, "key version 1 retired")
			require.Contains(t, out, "version 2 registered")
			require.Contains(t, out, "held under the old key until their next grant: acct (epoch 1)")
			retired := keyFile + ".v1.retired"
			old, err := host.LoadOrCreateKey(retired)
			require.NoError(t, err)
			require.Equal(t, k1, old, "the old key file is kept")
			k2, err := host.LoadOrCreateKey(keyFile)
			require.NoError(t, err)
			require.NotEqual(t, k1, k2)
			st, err := os.Stat(keyFile)
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
			cur, err := d.NodeKeyGet(ctx, &driver.NodeKeyGetParams{Node: "n1"})
			require.NoError(t, err)
			require.Equal(t, driver.NodeKey{Node: "n1", Version: 2, PublicKey: k2.Public().(ed25519.PublicKey), RegisteredAt: cur.RegisteredAt}, *cur)

			// The held epoch keeps its grant's key: the running host goes on.
			submit(h1, "after-rotation-old-epoch")
			require.NoError(t, h1.Stop(ctx))

			// The node's host restarted with the rotated file; the next
			// grant (here an operator revoke and a grant through the
			// store's grant path) carries the new key.
			h2, err := host.New(host.Config{Store: d, Node: "n1", Program: programs.Bank{}, Key: k2, SnapshotEvery: -1})
			require.NoError(t, err)
			defer h2.Stop(ctx)
			require.NoError(t, h2.Prepare(ctx, "acct"))
			run(0, "worlds", "revoke", "--world", "acct", "--reason", "key-rotation")
			_, err = d.LeaseChange(ctx, &driver.LeaseChangeParams{World: "acct", Op: "grant",
				Plan: func(w *driver.World, now time.Time) (journal.Plan, error) {
					return journal.PlanGrant(w.State, now, "n1", w.Epoch, 30*time.Second)
				}})
			require.NoError(t, err)
			require.NoError(t, h2.Acquire(ctx, "acct"))
			w, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "acct"})
			require.NoError(t, err)
			require.Equal(t, int64(2), w.Epoch)
			require.Equal(t, []byte(k2.Public().(ed25519.PublicKey)), w.HolderKey)
			for i := range 2 {
				submit(h2, fmt.Sprintf("new-%d", i))
			}

			// A batch signed with the retired key under the new epoch.
			w, err = d.WorldGet(ctx, &driver.WorldGetParams{World: "acct"})
			require.NoError(t, err)
			req := journal.AppendRequest{Holder: "n1", Epoch: w.Epoch, SeenPosition: w.Position, Kind: "note", Payload: []byte(`{}`), Position: w.Position + 1}
			req.Signature = journal.SignBatch(k1, []journal.Entry{{World: "acct", Position: req.Position, Epoch: req.Epoch, Kind: req.Kind, Holder: req.Holder, Payload: req.Payload}})
			outs, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "acct", Requests: []journal.AppendRequest{req}})
			require.NoError(t, err)
			require.ErrorIs(t, outs[0].Err, lease.ErrBadSignature)
			after, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "acct"})
			require.NoError(t, err)
			require.Equal(t, w.Position+1, after.Position, "nothing but the one append.rejected")
			submit(h2, "new-after-forgery")

			audit := run(0, "audit", "--world", "acct")
			require.Contains(t, audit, "OK: hash chain verified")
			require.Regexp(t, `[1-9][0-9]* signatures verified`, audit)

			// The retired key stays retired; bad rotations change nothing.
			require.Contains(t, run(exitConflict, "host", "--node", "n1", "--key", retired, "--listen", "127.0.0.1:0"), "retired")
			require.Contains(t, run(exitConflict, "host", "rotate-key", "--node", "n1", "--key", retired), "is not node n1's current key")
			require.Contains(t, run(exitNotFound, "host", "rotate-key", "--node", "nobody", "--key", keyFile), "registered no key")
			require.Contains(t, run(exitUsage, "host", "rotate-key", "--node", "n1", "--key", filepath.Join(dir, "missing.key")), "no key file to rotate")
			require.Contains(t, run(exitUsage, "host", "rotate-key", "--node", "n1"), "needs --node and --key")
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 2, "the key file and the one retired: no spare file left behind")
			cur, err = d.NodeKeyGet(ctx, &driver.NodeKeyGetParams{Node: "n1"})
			require.NoError(t, err)
			require.Equal(t, int64(2), cur.Version)
		})
	}
}
