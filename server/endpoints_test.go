package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// sampleBodies are bodies each POST route would accept as far as its
// shape goes, on the fixture of endpointFixture (run 1 in queue q, world
// w1): what a caller with the right token could send.
var sampleBodies = map[string]string{
	"POST /v1/runs":                      `{"runs":[{"queue":"q"}]}`,
	"POST /v1/runs/claim":                `{"queue":"q","owner":"o"}`,
	"POST /v1/runs/{id}/renew":           `{"fence":1,"owner":"o"}`,
	"POST /v1/runs/{id}/complete":        `{"fence":1}`,
	"POST /v1/runs/{id}/fail":            `{"fence":1}`,
	"POST /v1/runs/{id}/block":           `{"fence":1}`,
	"POST /v1/runs/{id}/snooze":          `{"fence":1,"delay_ms":0}`,
	"POST /v1/runs/{id}/cancel":          `{"reason":"r"}`,
	"POST /v1/runs/{id}/unblock":         `{}`,
	"POST /v1/runs/{id}/retry":           `{"fence":1}`,
	"POST /v1/runs/{id}/effects/begin":   `{"key":"k","fence":1,"owner":"o","max_duration_ms":1000}`,
	"POST /v1/runs/{id}/effects/commit":  `{"key":"k","fence":1}`,
	"POST /v1/runs/{id}/effects/resolve": `{"key":"k","fence":1,"happened":true}`,
	"POST /v1/runs/{id}/events":          `{"fence":1,"events":[{"seq":1,"kind":"k"}]}`,
	"POST /v1/tokens":                    `{"scopes":["read"]}`,
	"POST /v1/tokens/{id}/revoke":        `{}`,
	"POST /v1/admin/mode":                `{"mode":"sync","all":true}`,
	"POST /v1/worlds":                    `{"world":"w1","home":"h"}`,
	"POST /v1/worlds/{world}/grant":      `{"holder":"h","epoch":1}`,
	"POST /v1/worlds/{world}/renew":      `{"holder":"h","epoch":1}`,
	"POST /v1/worlds/{world}/handoff":    `{"from":"h","to":"x","epoch":1}`,
	"POST /v1/worlds/{world}/revoke":     `{"epoch":1}`,
	"POST /v1/worlds/{world}/append":     `{"holder":"h","epoch":1,"seen_position":1,"entries":[{"kind":"k"}]}`,
	"POST /v1/worlds/{world}/commands":   `{"key":"k","payload":{}}`,
	"POST /v1/runs/complete":             `{"runs":[{"id":1,"fence":1}]}`,
}

// endpointFixture is a server with run 1 (queue q, claimed by o under
// fence 1) and world w1 (held by h under epoch 1), and a function that
// snapshots both as the API shows them.
func endpointFixture(t *testing.T, open func(t *testing.T) leasehold.Driver, cfg server.Config) (*testBundle, func() string) {
	b := setup(t, open, leasehold.Config{}, cfg)
	run := b.enqueue(t, "q", `{}`)
	require.Equal(t, int64(1), run.ID)
	b.claimOne(t, "q", "o")
	var w worldReply
	b.post(t, "/v1/worlds", map[string]any{"world": "w1", "home": "h"}).ok(t, &w)
	return b, func() string {
		var all runsBody
		b.get(t, "/v1/runs").ok(t, &all)
		var ts struct{ Tokens []json.RawMessage }
		b.get(t, "/v1/tokens").ok(t, &ts)
		out, _ := json.Marshal(all)
		return string(out) + "\n" + b.snapshot(t, 1) + "\n" + b.worldSnapshot(t, "w1") + "\n" + strings.Repeat("token\n", len(ts.Tokens))
	}
}

// TestEveryEndpointRefusesAWrongScopeToken (Must show 1, auth): a valid
// token whose scopes cover nothing the call touches is refused 403
// forbidden on every route that needs more than a token — with a body
// that would otherwise be acceptable — and nothing changes.
func TestEveryEndpointRefusesAWrongScopeToken(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b, snap := endpointFixture(t, open, server.Config{})
		stranger := b.as(t, b.mint(t, "admin:queue:other", "admin:world:other"))
		before := snap()
		for _, key := range b.s.RouteKeys() {
			switch key {
			case "GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi.json":
				continue // no scope needed (readyz, metrics, openapi: any token)
			case "GET /v1/whoami":
				var who struct{ May map[string]bool }
				stranger.get(t, "/v1/whoami?queue=q").ok(t, &who)
				require.Equal(t, map[string]bool{"read": false, "work": false, "admin": false}, who.May, "any token may ask what it may do")
				continue
			case "GET /v1/stats/runs", "GET /v1/worlds":
				// Listings filtered by the token's scopes: answered, and
				// showing nothing of queue q or world w1.
				r := stranger.get(t, strings.TrimPrefix(key, "GET "))
				require.Equal(t, http.StatusOK, r.status, "%s: %s", key, r.body)
				require.Regexp(t, `^\{"(counts|worlds)":\[\](,"as_of":"[^"]+")?\}$`, strings.TrimSpace(string(r.body)), key)
				continue
			}
			method, path, _ := strings.Cut(key, " ")
			var body []byte
			if method == http.MethodPost {
				s, ok := sampleBodies[key]
				require.True(t, ok, "no sample body for %s", key)
				body = []byte(s)
			}
			r := stranger.do(t, method, strings.NewReplacer("{id}", "1", "{world}", "w1", "{queue}", "q").Replace(path), body)
			p := r.problem(t, "forbidden")
			require.Equal(t, http.StatusForbidden, p.Status, key)
		}
		require.Equal(t, before, snap(), "a forbidden call changed something")
	})
}

// TestEveryEndpointRefusesBadBodies (Must show 1, bodies): every POST
// route refuses an oversized body (413 too-large, unread past the cap), a
// malformed one and one with an unknown field (400 invalid), and nothing
// changes.
func TestEveryEndpointRefusesBadBodies(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b, snap := endpointFixture(t, open, server.Config{MaxBodyBytes: 1024})
		before := snap()
		for _, key := range b.s.RouteKeys() {
			method, path, _ := strings.Cut(key, " ")
			if method != http.MethodPost || key == "POST /v1/worlds/{world}/commands" {
				continue // commands: without a host attached it is unavailable before any body is read (worlds_host_test.go covers its bodies)
			}
			path = strings.NewReplacer("{id}", "1", "{world}", "w1", "{queue}", "q").Replace(path)
			sample := sampleBodies[key]
			var v map[string]any
			require.NoError(t, json.Unmarshal([]byte(sample), &v), key)
			v["zzz_unknown"] = 1
			unknown, _ := json.Marshal(v)
			v["zzz_unknown"] = strings.Repeat("x", 2048)
			big, _ := json.Marshal(v)
			for name, c := range map[string]struct {
				body []byte
				typ  string
			}{
				"unknown field": {unknown, "invalid"},
				"malformed":     {[]byte(`{"fence":`), "invalid"},
				"not an object": {[]byte(`[1]`), "invalid"},
				"trailing":      {append([]byte(sample), ` {}`...), "invalid"},
				"too large":     {big, "too-large"},
			} {
				r := b.do(t, method, path, c.body)
				require.Equal(t, "application/problem+json", r.ctype, "%s %s: %s", key, name, r.body)
				p := r.problem(t, c.typ)
				if c.typ == "too-large" {
					require.Equal(t, int64(1024), p.Limit, key)
				}
			}
			require.False(t, bytes.Equal(unknown, []byte(sample)))
		}
		require.Equal(t, before, snap(), "a refused body changed something")
	})
}
