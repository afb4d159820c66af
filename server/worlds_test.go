package server_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/server"
)

type worldHead struct {
	World     string `json:"world"`
	Home      string `json:"home"`
	Position  int64  `json:"position"`
	Epoch     int64  `json:"epoch"`
	Holder    string `json:"holder"`
	GrantedAt int64  `json:"granted_position"`
	HolderKey string `json:"holder_key"`
	RunwayMS  int64  `json:"runway_ms"`
}

type worldReply struct {
	World worldHead `json:"world"`
}

type journalReply struct {
	Entries []struct {
		Position  int64           `json:"position"`
		Epoch     int64           `json:"epoch"`
		Kind      string          `json:"kind"`
		Holder    string          `json:"holder"`
		Key       string          `json:"key"`
		Payload   json.RawMessage `json:"payload"`
		Hash      string          `json:"hash"`
		Signature []byte          `json:"signature"`
	} `json:"entries"`
	Next string `json:"next"`
}

func worldPath(w, tail string) string { return "/v1/worlds/" + w + tail }

// world reads a world's head through the API.
func (b *testBundle) world(t *testing.T, w string) worldHead {
	t.Helper()
	var r worldReply
	b.get(t, worldPath(w, "")).ok(t, &r)
	return r.World
}

// worldSnapshot is everything the API shows of a world: its head and its
// whole journal.
func (b *testBundle) worldSnapshot(t *testing.T, w string) string {
	t.Helper()
	parts := []string{string(b.get(t, worldPath(w, "")).body)}
	for from := "1"; from != ""; {
		r := b.get(t, worldPath(w, "/journal?limit=2&from="+from))
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		var page journalReply
		r.ok(t, &page)
		parts = append(parts, string(r.body))
		from = page.Next
	}
	return strings.Join(parts, "\n")
}

func entries(es ...string) []map[string]any {
	out := make([]map[string]any, len(es))
	for i, e := range es {
		out[i] = map[string]any{"kind": "move", "payload": json.RawMessage(e)}
	}
	return out
}

// TestWorldsThroughTheAPI drives a world's whole lease protocol over
// HTTP on both stores: create, read, revoke, grant, renew, append (keyed,
// paged back), hand off — and each refusal as its typed problem naming
// the lease in force.
func TestWorldsThroughTheAPI(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{MaxBodyBytes: 8192})
		r := b.post(t, "/v1/worlds", map[string]any{"world": "w1", "home": "node-h"})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		var created worldReply
		r.ok(t, &created)
		require.Equal(t, worldHead{World: "w1", Home: "node-h", Position: 1, Epoch: 1, Holder: "node-h", GrantedAt: 1}, created.World)
		b.post(t, "/v1/worlds", map[string]any{"world": "w1", "home": "node-h"}).problem(t, "conflict")
		require.Equal(t, created.World, b.world(t, "w1"))

		// grant while held: lease-held; revoke under a stale epoch: fenced.
		b.post(t, worldPath("w1", "/grant"), map[string]any{"holder": "node-a", "epoch": 1}).problem(t, "lease-held")
		p := b.post(t, worldPath("w1", "/revoke"), map[string]any{"epoch": 7, "reason": "x"}).problem(t, "fenced")
		require.Equal(t, int64(1), p.CurrentEpoch)
		var w worldReply
		b.post(t, worldPath("w1", "/revoke"), map[string]any{"epoch": 1, "reason": "operator"}).ok(t, &w)
		require.Empty(t, w.World.Holder)
		b.post(t, worldPath("w1", "/grant"), map[string]any{"holder": "node-a", "epoch": 1}).ok(t, &w)
		require.Equal(t, int64(2), w.World.Epoch)
		require.Equal(t, "node-a", w.World.Holder)
		require.Positive(t, w.World.RunwayMS, "a grant answers the runway it can vouch for")
		granted := w.World.GrantedAt

		// renew: the holder under its epoch; another holder or epoch refused.
		b.post(t, worldPath("w1", "/renew"), map[string]any{"holder": "node-a", "epoch": 2}).ok(t, &w)
		require.Positive(t, w.World.RunwayMS)
		base := w.World.Position // the renewal journaled lease.renewed
		b.post(t, worldPath("w1", "/renew"), map[string]any{"holder": "node-b", "epoch": 2}).problem(t, "not-holder")
		b.post(t, worldPath("w1", "/renew"), map[string]any{"holder": "node-a", "epoch": 1}).problem(t, "fenced")

		// append: a batch in order; a key already appended answers its
		// first position; seen behind the grant refused.
		var app struct{ Positions []int64 }
		b.post(t, worldPath("w1", "/append"), map[string]any{"holder": "node-a", "epoch": 2, "seen_position": granted,
			"entries": entries(`{"n":1}`, `{"n":2}`, `{"n":3}`)}).ok(t, &app)
		require.Equal(t, []int64{base + 1, base + 2, base + 3}, app.Positions)
		keyed := map[string]any{"holder": "node-a", "epoch": 2, "seen_position": base + 3,
			"entries": []map[string]any{{"kind": "move", "key": "cmd-1", "payload": json.RawMessage(`{"n":4}`)}}}
		b.post(t, worldPath("w1", "/append"), keyed).ok(t, &app)
		first := app.Positions[0]
		keyed["seen_position"] = first
		b.post(t, worldPath("w1", "/append"), keyed).ok(t, &app)
		require.Equal(t, []int64{first}, app.Positions, "a retried key is applied once")
		b.post(t, worldPath("w1", "/append"), map[string]any{"holder": "node-a", "epoch": 2, "seen_position": granted - 1,
			"entries": entries(`{}`)}).problem(t, "seen-behind")

		// the journal in pages, from a position.
		var page journalReply
		b.get(t, worldPath("w1", "/journal?from=1&limit=3")).ok(t, &page)
		require.Len(t, page.Entries, 3)
		require.Equal(t, "4", page.Next)
		require.Equal(t, "lease.granted", page.Entries[0].Kind, "the create grants epoch 1")
		page = journalReply{}
		b.get(t, worldPath("w1", fmt.Sprintf("/journal?from=%d", base+1))).ok(t, &page)
		require.Empty(t, page.Next)
		require.Len(t, page.Entries, 4)
		require.Equal(t, []int64{base + 1, base + 2, base + 3, first}, []int64{page.Entries[0].Position, page.Entries[1].Position, page.Entries[2].Position, page.Entries[3].Position})
		require.JSONEq(t, `{"n":2}`, string(page.Entries[1].Payload))
		require.Equal(t, "cmd-1", page.Entries[3].Key)

		// handoff: the holder's last act.
		b.post(t, worldPath("w1", "/handoff"), map[string]any{"from": "node-a", "to": "node-b", "epoch": 2}).ok(t, &w)
		require.Equal(t, int64(3), w.World.Epoch)
		require.Equal(t, "node-b", w.World.Holder)
		b.post(t, worldPath("w1", "/handoff"), map[string]any{"from": "node-a", "to": "node-c", "epoch": 2}).problem(t, "fenced")

		// not found, invalid, too large, unknown fields; no host attached.
		b.get(t, worldPath("nope", "")).problem(t, "not-found")
		b.post(t, worldPath("nope", "/append"), map[string]any{"holder": "h", "epoch": 1, "seen_position": 1, "entries": entries(`{}`)}).problem(t, "not-found")
		b.get(t, worldPath("nope", "/journal")).problem(t, "not-found")
		b.get(t, worldPath("a%20b", "")).problem(t, "invalid")
		b.get(t, worldPath("w1", "/journal?limit=5000")).problem(t, "invalid")
		b.get(t, worldPath("w1", "/journal?from=x")).problem(t, "invalid")
		seen := w.World.GrantedAt // node-b's: each body below would be accepted but for its fault
		deep := json.RawMessage(`{"d":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`)
		for name, body := range map[string]any{
			"no entries":        map[string]any{"holder": "node-b", "epoch": 3, "seen_position": seen, "entries": []any{}},
			"reserved kind":     map[string]any{"holder": "node-b", "epoch": 3, "seen_position": seen, "entries": []map[string]any{{"kind": "lease.granted"}}},
			"too deep":          map[string]any{"holder": "node-b", "epoch": 3, "seen_position": seen, "entries": []map[string]any{{"kind": "k", "payload": deep}}},
			"position unsigned": map[string]any{"holder": "node-b", "epoch": 3, "seen_position": seen, "position": 9, "entries": entries(`{}`)},
			"unknown field":     map[string]any{"holder": "node-b", "epoch": 3, "seen_position": seen, "entries": entries(`{}`), "force": true},
			"bad key":           map[string]any{"holder": "node-b", "epoch": 3, "seen_position": seen, "entries": []map[string]any{{"kind": "k", "key": "a\u0000b"}}},
		} {
			before := b.worldSnapshot(t, "w1")
			b.post(t, worldPath("w1", "/append"), body).problem(t, "invalid")
			require.Equal(t, before, b.worldSnapshot(t, "w1"), name)
		}
		b.post(t, worldPath("w1", "/append"), map[string]any{"holder": "node-b", "epoch": 3, "seen_position": seen, "entries": entries(`{}`)}).ok(t, &app)
		b.do(t, http.MethodPost, worldPath("w1", "/grant"), []byte(`{"holder":"x","epoch":`)).problem(t, "invalid")
		b.do(t, http.MethodPost, "/v1/worlds", []byte(`{"world":"w2","home":"h","x":1}`)).problem(t, "invalid")
		big := []byte(`{"holder":"node-b","epoch":3,"seen_position":1,"entries":[{"kind":"k","payload":{"s":"` + strings.Repeat("x", 9000) + `"}}]}`)
		require.Equal(t, int64(8192), b.do(t, http.MethodPost, worldPath("w1", "/append"), big).problem(t, "too-large").Limit)
		b.post(t, worldPath("w1", "/commands"), map[string]any{"key": "k", "payload": json.RawMessage(`{}`)}).problem(t, "unavailable")
	})
}

// TestAStaleEpochAppendChangesNothing (Must show 2, worlds): the holder
// handed off — or revoked — appends under its old epoch. The API answers
// the fenced problem naming the epoch and holder in force; no entry of
// its batch is written. The refusal is journaled once per holder per epoch
// as append.rejected (SPEC §4: the audit sees the zombie), and a second
// stale append leaves the head and the journal byte for byte as they were.
func TestAStaleEpochAppendChangesNothing(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		var w worldReply
		b.post(t, "/v1/worlds", map[string]any{"world": "w1", "home": "zombie"}).ok(t, &w)
		var app struct{ Positions []int64 }
		b.post(t, worldPath("w1", "/append"), map[string]any{"holder": "zombie", "epoch": 1, "seen_position": 1, "entries": entries(`{"n":1}`)}).ok(t, &app)
		b.post(t, worldPath("w1", "/handoff"), map[string]any{"from": "zombie", "to": "node-b", "epoch": 1}).ok(t, &w)
		require.Equal(t, int64(2), w.World.Epoch)

		stale := map[string]any{"holder": "zombie", "epoch": 1, "seen_position": 2, "entries": entries(`{"n":2}`, `{"n":3}`)}
		before := b.worldSnapshot(t, "w1")
		head := b.world(t, "w1")
		p := b.post(t, worldPath("w1", "/append"), stale).problem(t, "fenced")
		require.Equal(t, http.StatusConflict, p.Status)
		require.Equal(t, int64(1), p.Epoch)
		require.Equal(t, int64(2), p.CurrentEpoch)
		require.Equal(t, "node-b", p.CurrentHolder)
		require.Equal(t, "stale_epoch", p.Reason)
		after := b.world(t, "w1")
		require.Equal(t, head.Position+1, after.Position, "only the append.rejected marker")
		var page journalReply // fresh: an absent next must read as absent
		b.get(t, worldPath("w1", fmt.Sprintf("/journal?from=%d", head.Position+1))).ok(t, &page)
		require.Len(t, page.Entries, 1)
		require.Equal(t, "append.rejected", page.Entries[0].Kind)
		require.Equal(t, int64(2), page.Entries[0].Epoch, "journaled under the epoch in force, not the zombie's")
		require.NotContains(t, before, `"n":2`)

		once := b.worldSnapshot(t, "w1")
		b.post(t, worldPath("w1", "/append"), stale).problem(t, "fenced")
		require.Equal(t, once, b.worldSnapshot(t, "w1"), "a second stale append changes nothing at all")
		require.NotContains(t, once, `"n":2`)

		// revoked: the same, for the holder of the revoked epoch.
		b.post(t, worldPath("w1", "/revoke"), map[string]any{"epoch": 2, "reason": "operator"}).ok(t, &w)
		b.post(t, worldPath("w1", "/append"), map[string]any{"holder": "node-b", "epoch": 2, "seen_position": 3, "entries": entries(`{"n":9}`)}).problem(t, "fenced")
		require.NotContains(t, b.worldSnapshot(t, "w1"), `"n":9`)
		audit, err := b.c.Audit(t.Context(), "w1")
		require.NoError(t, err)
		require.True(t, audit.OK(), "%v", audit.Violation)
	})
}

// TestSignedAppendsThroughTheAPI: a holder whose grant carries its node
// key appends signed batches through the API; an unsigned or badly signed
// batch is refused bad-signature and writes no entry of it; the journal
// audits.
func TestSignedAppendsThroughTheAPI(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		pub, priv, err := ed25519.GenerateKey(nil)
		require.NoError(t, err)
		_, err = b.c.Driver().NodeKeyRegister(context.Background(), &driver.NodeKeyRegisterParams{Node: "node-s", PublicKey: pub})
		require.NoError(t, err)
		var w worldReply
		b.post(t, "/v1/worlds", map[string]any{"world": "w1", "home": "node-h"}).ok(t, &w)
		b.post(t, worldPath("w1", "/revoke"), map[string]any{"epoch": 1, "reason": "move"}).ok(t, &w)
		b.post(t, worldPath("w1", "/grant"), map[string]any{"holder": "node-s", "epoch": 1}).ok(t, &w)
		require.Equal(t, journal.EncodeKey(pub), w.World.HolderKey, "the grant carries the node's key")
		seen := w.World.Position

		sign := func(from int64, payloads ...string) []byte {
			es := make([]journal.Entry, len(payloads))
			for i, p := range payloads {
				es[i] = journal.Entry{World: "w1", Position: from + int64(i), Epoch: w.World.Epoch, Kind: "move", Holder: "node-s", Payload: []byte(p)}
			}
			return journal.SignBatch(priv, es)
		}
		body := func(from int64, sig []byte, payloads ...string) map[string]any {
			return map[string]any{"holder": "node-s", "epoch": w.World.Epoch, "seen_position": seen, "position": from, "signature": sig, "entries": entries(payloads...)}
		}
		var app struct{ Positions []int64 }
		b.post(t, worldPath("w1", "/append"), body(seen+1, sign(seen+1, `{"n":1}`, `{"n":2}`), `{"n":1}`, `{"n":2}`)).ok(t, &app)
		require.Equal(t, []int64{seen + 1, seen + 2}, app.Positions)

		before := b.world(t, "w1")
		b.post(t, worldPath("w1", "/append"), body(seen+3, sign(seen+3, `{"n":3}`), `{"n":666}`)).problem(t, "bad-signature")
		b.post(t, worldPath("w1", "/append"), map[string]any{"holder": "node-s", "epoch": w.World.Epoch, "seen_position": seen, "entries": entries(`{"n":667}`)}).problem(t, "bad-signature")
		snap := b.worldSnapshot(t, "w1")
		require.NotContains(t, snap, `"n":666`)
		require.NotContains(t, snap, `"n":667`)
		require.Equal(t, before.Epoch, b.world(t, "w1").Epoch)
		audit, err := b.c.Audit(t.Context(), "w1")
		require.NoError(t, err)
		require.True(t, audit.OK(), "%v", audit.Violation)
	})
}

// TestWorldScopes: a token scoped to a world prefix may work those worlds
// and read them, not create, grant or revoke them (admin), and nothing
// outside the prefix.
func TestWorldScopes(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		var w worldReply
		b.post(t, "/v1/worlds", map[string]any{"world": "game-1", "home": "node-a"}).ok(t, &w)
		b.post(t, "/v1/worlds", map[string]any{"world": "bank-1", "home": "node-a"}).ok(t, &w)
		node := b.as(t, b.mint(t, "work:world:game-*"))
		var app struct{ Positions []int64 }
		node.post(t, worldPath("game-1", "/append"), map[string]any{"holder": "node-a", "epoch": 1, "seen_position": 1, "entries": entries(`{}`)}).ok(t, &app)
		node.get(t, worldPath("game-1", "/journal")).ok(t, &journalReply{})
		before := b.worldSnapshot(t, "bank-1")
		p := node.post(t, worldPath("bank-1", "/append"), map[string]any{"holder": "node-a", "epoch": 1, "seen_position": 1, "entries": entries(`{}`)}).problem(t, "forbidden")
		require.Equal(t, "world bank-1", p.Resource)
		require.Equal(t, before, b.worldSnapshot(t, "bank-1"))
		node.get(t, worldPath("bank-1", "")).problem(t, "forbidden")
		node.post(t, worldPath("game-1", "/revoke"), map[string]any{"epoch": 1}).problem(t, "forbidden")
		node.post(t, worldPath("game-1", "/grant"), map[string]any{"holder": "x", "epoch": 1}).problem(t, "forbidden")
		node.post(t, "/v1/worlds", map[string]any{"world": "game-2", "home": "node-a"}).problem(t, "forbidden")
		b.get(t, worldPath("game-2", "")).problem(t, "not-found")
		b.anon(t).get(t, worldPath("game-1", "")).problem(t, "unauthorized")
	})
}
