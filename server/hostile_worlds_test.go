package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/hostile"
)

// driveWorldsAndTokens is the hostile corpus on the world and token
// endpoints (called by driveServer, so both stores must answer alike):
// strings as world id, home, grant holder, append holder, kind and key,
// revoke reason, token name and scope; payloads as append payloads;
// integers as epochs, seen positions and journal cursors. An accepted
// call reads back as sent; a refused append writes no data entry (a
// refusal for epoch or holder may journal its append.rejected marker —
// SPEC §4) and leaves the lease as it was.
func driveWorldsAndTokens(t *testing.T, b *testBundle, out map[string]string) {
	post := func(key, path string, body []byte) (reply, bool) {
		r := b.do(t, http.MethodPost, path, body)
		out[key] = outcomeOf(t, key, r)
		return r, out[key] == "accepted"
	}
	var w worldReply
	b.post(t, "/v1/worlds", map[string]any{"world": "hw", "home": "h"}).ok(t, &w)
	seen := strconv.FormatInt(w.World.GrantedAt, 10)
	// data is what a refusal must not change: the lease and the data
	// entries (kinds other than append.rejected).
	data := func() string {
		head := b.world(t, "hw")
		var page journalReply
		b.get(t, worldPath("hw", "/journal?limit=1000")).ok(t, &page)
		n := 0
		for _, e := range page.Entries {
			if e.Kind != "append.rejected" {
				n++
			}
		}
		return head.Holder + "/" + strconv.FormatInt(head.Epoch, 10) + "/" + strconv.Itoa(n)
	}
	appendOne := func(key, holder, epoch, seenPos, entry string) (int64, bool) {
		before := data()
		r, ok := post(key, worldPath("hw", "/append"), []byte(`{"holder":`+holder+`,"epoch":`+epoch+`,"seen_position":`+seenPos+`,"entries":[`+entry+`]}`))
		if !ok {
			if after := data(); after != before {
				t.Errorf("%s: refused, yet the world went %s → %s", key, before, after)
			}
			return 0, false
		}
		var app struct{ Positions []int64 }
		r.ok(t, &app)
		return app.Positions[0], true
	}
	entryAt := func(pos int64) (e struct {
		Kind    string          `json:"kind"`
		Key     string          `json:"key"`
		Payload json.RawMessage `json:"payload"`
	}) {
		var page struct {
			Entries []struct {
				Kind    string          `json:"kind"`
				Key     string          `json:"key"`
				Payload json.RawMessage `json:"payload"`
			} `json:"entries"`
		}
		b.get(t, worldPath("hw", "/journal?limit=1&from="+strconv.FormatInt(pos, 10))).ok(t, &page)
		require.Len(t, page.Entries, 1)
		return page.Entries[0]
	}

	for i, s := range hostile.Strings() {
		v, q := s.Value, rawJSONString(s.Value)
		key := func(entry string) string { return entry + "/" + s.Name }
		wid := "hs-" + strconv.Itoa(i)
		if _, ok := post(key("worlds.world"), "/v1/worlds", []byte(`{"world":`+q+`,"home":"h"}`)); ok {
			require.Equal(t, v, b.world(t, worldSegment(v)).World, key("worlds.world"))
		}
		if _, ok := post(key("worlds.home"), "/v1/worlds", []byte(`{"world":"`+wid+`","home":`+q+`}`)); ok {
			require.Equal(t, v, b.world(t, wid).Home, key("worlds.home"))
			if _, ok := post(key("revoke.reason"), worldPath(wid, "/revoke"), []byte(`{"epoch":1,"reason":`+q+`}`)); ok {
				if _, ok := post(key("grant.holder"), worldPath(wid, "/grant"), []byte(`{"epoch":1,"holder":`+q+`}`)); ok {
					require.Equal(t, v, b.world(t, wid).Holder, key("grant.holder"))
				}
			}
		}
		appendOne(key("append.holder"), q, "1", seen, `{"kind":"k"}`)
		if pos, ok := appendOne(key("append.kind"), `"h"`, "1", seen, `{"kind":`+q+`}`); ok {
			require.Equal(t, v, entryAt(pos).Kind, key("append.kind"))
		}
		if pos, ok := appendOne(key("append.key"), `"h"`, "1", seen, `{"kind":"k","key":`+q+`}`); ok {
			require.Equal(t, v, entryAt(pos).Key, key("append.key"))
		}
		if r, ok := post(key("tokens.name"), "/v1/tokens", []byte(`{"name":`+q+`,"scopes":["read"]}`)); ok {
			var made struct {
				Token struct{ Name string } `json:"token"`
			}
			r.ok(t, &made)
			require.Equal(t, v, made.Token.Name, key("tokens.name"))
		}
		post(key("tokens.scope"), "/v1/tokens", []byte(`{"scopes":[`+q+`]}`))
	}

	for _, p := range hostile.Payloads() {
		key := "append.payload/" + p.Name
		if pos, ok := appendOne(key, `"h"`, "1", seen, string(withPayload(`"kind":"k"`, "payload", p.Value))); ok && p.Value != nil {
			require.Equal(t, compactJSON(p.Value), string(entryAt(pos).Payload), key)
		}
	}

	for _, n := range hostile.Ints() {
		v := strconv.FormatInt(n.Value, 10)
		key := func(entry string) string { return entry + "/" + n.Name }
		appendOne(key("append.epoch"), `"h"`, v, seen, `{"kind":"k"}`) // accepted only under the current epoch
		appendOne(key("append.seen_position"), `"h"`, "1", v, `{"kind":"k"}`)
		before := data()
		post(key("renew.epoch"), worldPath("hw", "/renew"), []byte(`{"holder":"nobody","epoch":`+v+`}`))
		post(key("grant.epoch"), worldPath("hw", "/grant"), []byte(`{"holder":"g","epoch":`+v+`}`))
		post(key("revoke.epoch"), worldPath("hw", "/revoke"), []byte(`{"epoch":`+v+`,"reason":"r"}`))
		if out[key("revoke.epoch")] == "accepted" { // v was the current epoch: hold the world again and go on
			require.Equal(t, w.World.Epoch, n.Value, key("revoke.epoch"))
			b.post(t, worldPath("hw", "/grant"), map[string]any{"holder": "h", "epoch": n.Value}).ok(t, &w)
			seen = strconv.FormatInt(w.World.GrantedAt, 10)
		} else {
			require.Equal(t, before, data(), key("lease ops"))
		}
		r := b.get(t, worldPath("hw", "/journal?from="+v))
		out[key("journal.from")] = outcomeOf(t, key("journal.from"), r)
		r = b.get(t, worldPath("hw", "/journal?limit="+v))
		out[key("journal.limit")] = outcomeOf(t, key("journal.limit"), r)
	}
}

// worldSegment is a world id as one path segment: percent-encoded ("/" as
// %2F), and "." and ".." as %2E and %2E%2E — a client sending them raw
// would have its path cleaned (a redirect) before any route saw it.
func worldSegment(id string) string {
	if id == "." || id == ".." {
		return strings.ReplaceAll(id, ".", "%2E")
	}
	return url.PathEscape(id)
}
