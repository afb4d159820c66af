package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/server"
)

// concretePath fills a route's path parameters.
func concretePath(path string) string {
	return strings.NewReplacer("{id}", "1", "{world}", "w1", "{queue}", "q").Replace(path)
}

// TestEveryRouteNeedsAToken: every route but /healthz — and an unrouted
// path — answers 401 unauthorized (with WWW-Authenticate) to a request
// with no token, a malformed one, or one the store does not know; and
// /healthz answers without one.
func TestEveryRouteNeedsAToken(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		b.enqueue(t, "q", `{}`)
		keys := append(b.s.RouteKeys(), "GET /v2/nothing")
		for _, tok := range []string{"", "not-a-token", "lh_unknownunknownunknown"} {
			a := b.as(t, tok)
			for _, key := range keys {
				method, path, _ := strings.Cut(key, " ")
				r := a.do(t, method, concretePath(path), []byte(`{}`))
				if key == "GET /healthz" {
					require.Equal(t, http.StatusOK, r.status)
					continue
				}
				r.problem(t, "unauthorized")
				require.Equal(t, http.StatusUnauthorized, r.status, key)
			}
		}
		resp, err := b.anon(t).http.Get(b.url + "/v1/runs")
		require.NoError(t, err)
		resp.Body.Close()
		require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
		var st struct{ Status string }
		b.anon(t).get(t, "/healthz").ok(t, &st)
	})
}

// TestEveryRouteHasARule: each route has its own authorization rule; one
// without would be open only to a bare admin token (closed by default).
func TestEveryRouteHasARule(t *testing.T) {
	t.Parallel()
	b := setup(t, stores[0].open, leasehold.Config{}, server.Config{})
	for _, key := range b.s.RouteKeys() {
		require.True(t, server.HasRule(key), "%s has no rule in authz.go", key)
	}
}

// TestScopesBoundWhatATokenMayDo: a token scoped to a queue and an action
// may do that and what is below it, and is refused 403 forbidden —
// naming the action and the resource, with nothing written — for another
// queue, a higher action, an unfiltered listing or token management.
func TestScopesBoundWhatATokenMayDo(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		sms := b.enqueue(t, "sms", `{}`)
		worker := b.as(t, b.mint(t, "work:queue:emails.*"))
		reader := b.as(t, b.mint(t, "read:queue:emails.eu"))

		var e enqueued
		worker.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{{"queue": "emails.eu"}}}).ok(t, &e)
		run := e.Runs[0].Run
		p := worker.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{{"queue": "emails.eu"}, {"queue": "sms"}}}).problem(t, "forbidden")
		require.Equal(t, http.StatusForbidden, p.Status)
		require.Equal(t, "work", p.Action)
		require.Equal(t, "queue sms", p.Resource)
		var all runsBody
		b.get(t, "/v1/runs").ok(t, &all)
		require.Len(t, all.Runs, 2, "the refused batch wrote nothing, not even its permitted run")

		worker.post(t, "/v1/runs/claim", map[string]any{"queue": "sms", "owner": "o"}).problem(t, "forbidden")
		worker.post(t, runPath(sms.ID, "/cancel"), map[string]any{"reason": "no"}).problem(t, "forbidden")
		held := worker.claimOne(t, "emails.eu", "o")
		require.Equal(t, run.ID, held.ID)
		worker.post(t, runPath(held.ID, "/cancel"), map[string]any{"reason": "no"}).problem(t, "forbidden") // admin
		worker.get(t, runPath(sms.ID, "")).problem(t, "forbidden")
		worker.get(t, "/v1/runs").problem(t, "forbidden")
		worker.get(t, "/v1/runs?queue=emails.eu").ok(t, &all)
		worker.get(t, "/v1/tokens").problem(t, "forbidden")
		worker.post(t, "/v1/tokens", map[string]any{"scopes": []string{"admin"}}).problem(t, "forbidden")

		reader.get(t, runPath(held.ID, "")).ok(t, &runBody{})
		reader.get(t, runPath(held.ID, "/events")).ok(t, &struct{}{})
		before := b.snapshot(t, held.ID)
		p = reader.post(t, runPath(held.ID, "/complete"), map[string]any{"fence": held.Fence}).problem(t, "forbidden")
		require.Equal(t, "work", p.Action)
		require.Equal(t, "queue emails.eu", p.Resource)
		require.Equal(t, before, b.snapshot(t, held.ID), "a forbidden call changes nothing")
		worker.post(t, runPath(held.ID, "/complete"), map[string]any{"fence": held.Fence}).ok(t, &struct{}{})

		// metrics, readiness and the document need a token, any token.
		for _, path := range []string{"/readyz", "/metrics", "/openapi.json"} {
			r := reader.get(t, path)
			require.Equal(t, http.StatusOK, r.status, path)
		}
	})
}

// TestTokensThroughTheAPI: an admin token mints, lists and revokes tokens
// over HTTP; the secret is in the create answer only; a revoked token is
// refused at once by the server it was revoked through; bad bodies are
// refused typed.
func TestTokensThroughTheAPI(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{MaxBodyBytes: 1024})
		var made struct {
			Token struct {
				ID     string   `json:"id"`
				Name   string   `json:"name"`
				Scopes []string `json:"scopes"`
			} `json:"token"`
			Secret string `json:"secret"`
		}
		r := b.post(t, "/v1/tokens", map[string]any{"name": "ci", "scopes": []string{"work:queue:q"}})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		r.ok(t, &made)
		require.True(t, strings.HasPrefix(made.Secret, "lh_"))
		require.Equal(t, []string{"work:queue:q"}, made.Token.Scopes)
		ci := b.as(t, made.Secret)
		ci.enqueue(t, "q", `{}`)

		r = b.get(t, "/v1/tokens")
		require.Equal(t, http.StatusOK, r.status)
		require.NotContains(t, string(r.body), made.Secret, "a listing shows no secret")
		var list struct {
			Tokens []struct {
				ID        string `json:"id"`
				RevokedAt string `json:"revoked_at"`
			} `json:"tokens"`
		}
		r.ok(t, &list)
		require.Len(t, list.Tokens, 2, "setup's admin token and ci")

		var rev struct {
			Token struct {
				RevokedAt string `json:"revoked_at"`
			} `json:"token"`
		}
		b.do(t, http.MethodPost, "/v1/tokens/"+made.Token.ID+"/revoke", nil).ok(t, &rev)
		require.NotEmpty(t, rev.Token.RevokedAt)
		ci.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{{"queue": "q"}}}).problem(t, "unauthorized")
		b.do(t, http.MethodPost, "/v1/tokens/tok-none/revoke", nil).problem(t, "not-found")

		for name, body := range map[string]string{
			"bad scope":     `{"scopes":["root"]}`,
			"no scopes":     `{"scopes":[]}`,
			"unknown field": `{"scopes":["read"],"admin":true}`,
			"malformed":     `{"scopes":`,
			"control name":  `{"name":"a\u0000b","scopes":["read"]}`,
		} {
			b.do(t, http.MethodPost, "/v1/tokens", []byte(body)).problem(t, "invalid")
			_ = name
		}
		big, _ := json.Marshal(map[string]any{"name": strings.Repeat("n", 2000), "scopes": []string{"read"}})
		b.do(t, http.MethodPost, "/v1/tokens", big).problem(t, "too-large")
		b.get(t, "/v1/tokens").ok(t, &list)
		require.Len(t, list.Tokens, 2, "no refused body minted a token")
	})
}

// TestTheRateLimitIsPerToken: over its rate a token is refused 429
// rate-limited with Retry-After, other tokens are not, and once the
// bucket refills (the server's clock steps) it is served again.
func TestTheRateLimitIsPerToken(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	b := setup(t, stores[0].open, leasehold.Config{}, server.Config{Clock: clk, RateLimit: 1, RateBurst: 2})
	other := b.as(t, b.mint(t, "read"))
	b.get(t, "/readyz")
	b.get(t, "/readyz")
	r := b.get(t, "/readyz")
	p := r.problem(t, "rate-limited")
	require.Equal(t, http.StatusTooManyRequests, p.Status)
	var doc struct {
		RetryAfterMS int64 `json:"retry_after_ms"`
	}
	require.NoError(t, json.Unmarshal(r.body, &doc))
	require.Equal(t, int64(1000), doc.RetryAfterMS)
	resp, err := b.http.Get(b.url + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.Equal(t, http.StatusOK, other.get(t, "/readyz").status, "another token has its own bucket")
	clk.Advance(time.Second)
	require.Equal(t, http.StatusOK, b.get(t, "/readyz").status, "refilled")
	b.anon(t).get(t, "/readyz").problem(t, "unauthorized")
	m := other.get(t, "/metrics")
	require.Contains(t, string(m.body), `leasehold_http_auth_refusals_total{reason="rate-limited"} 2`)
	require.Contains(t, string(m.body), `leasehold_http_auth_refusals_total{reason="unauthorized"} 1`)
}

// TestARevocationElsewhereIsSeenWithinTheCacheTTL: a token revoked in the
// store by another process (the CLI, another server: here the client) is
// still served from this server's cache until TokenCacheTTL has passed on
// its clock, then refused — and a token never seen is read at once.
func TestARevocationElsewhereIsSeenWithinTheCacheTTL(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	b := setup(t, stores[0].open, leasehold.Config{}, server.Config{Clock: clk, TokenCacheTTL: 5 * time.Second})
	secret, tok, err := b.c.CreateToken(t.Context(), "elsewhere", []string{"read"})
	require.NoError(t, err)
	a := b.as(t, secret)
	require.Equal(t, http.StatusOK, a.get(t, "/readyz").status, "read from the store, then cached")
	_, err = b.c.RevokeToken(t.Context(), tok.ID)
	require.NoError(t, err)
	clk.Advance(4 * time.Second)
	require.Equal(t, http.StatusOK, a.get(t, "/readyz").status, "within the TTL the cache still vouches for it")
	clk.Advance(time.Second)
	a.get(t, "/readyz").problem(t, "unauthorized")
	fresh := b.as(t, b.mint(t, "read"))
	require.Equal(t, http.StatusOK, fresh.get(t, "/readyz").status)
}
