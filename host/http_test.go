package host_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/lease"
)

func serve(t *testing.T, h *host.Host) *host.Remote {
	srv := httptest.NewServer(host.Handler(h))
	t.Cleanup(srv.Close)
	return host.NewRemote(h.Node(), srv.URL, srv.Client())
}

// TestRemoteHostsAnswerLikeLocalOnes: the typed errors survive the wire,
// and a router over two remote hosts follows a handoff and back.
func TestRemoteHostsAnswerLikeLocalOnes(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		home := serve(t, newHost(t, d, "home-1", programs.Bank{}))
		spill := serve(t, newHost(t, d, "spill-1", programs.Bank{}))
		require.NoError(t, home.Create(ctx, "acct"))

		first, err := home.Submit(ctx, "acct", deposit("alice", 5))
		require.NoError(t, err)
		again, err := home.Submit(ctx, "acct", deposit("alice", 5))
		require.NoError(t, err)
		require.True(t, again.Duplicate)
		require.Equal(t, first.Position, again.Position)

		reused := deposit("alice", 6)
		reused.Key = "dep-alice-5"
		_, err = home.Submit(ctx, "acct", reused)
		var kr *host.KeyReusedError
		require.ErrorAs(t, err, &kr)
		require.Equal(t, first.Position, kr.Position)

		_, err = spill.Submit(ctx, "acct", deposit("alice", 7))
		var nh *host.NotHolderError
		require.ErrorAs(t, err, &nh)
		require.Equal(t, "home-1", nh.Holder, "the not-holder answer names the holder")

		_, err = home.Submit(ctx, "acct", host.Command{Key: "x", Payload: json.RawMessage(`{"op":"steal"}`)})
		var ce *host.CommandError
		require.ErrorAs(t, err, &ce)
		_, err = home.Submit(ctx, "nope", deposit("a", 1))
		require.ErrorIs(t, err, lease.ErrNotFound)

		r := host.NewRouter(d, home, spill)
		require.NoError(t, r.Handoff(ctx, "acct", "home-1", "spill-1"))
		rep, err := r.Submit(ctx, "acct", deposit("alice", 8))
		require.NoError(t, err)
		require.NoError(t, r.Handoff(ctx, "acct", "spill-1", "home-1"))
		bal, err := r.Submit(ctx, "acct", host.Command{Key: "bal", Payload: json.RawMessage(`{"op":"balance","account":"alice"}`)})
		require.NoError(t, err)
		require.JSONEq(t, `{"ok":true,"balance":13}`, string(bal.Payload))
		require.Greater(t, bal.Position, rep.Position)
		es := journalOf(t, d, "acct")
		auditOK(t, es)
		for k, n := range turnKeys(es) {
			require.Equal(t, 1, n, k)
		}
	})
}

// TestTheHTTPAPIRefusesBadBodies: unknown fields, trailing data, a body
// over the bound and a bad world id are each a 400 problem document.
func TestTheHTTPAPIRefusesBadBodies(t *testing.T) {
	d := openSQLite(t)
	h := newHost(t, d, "home-1", programs.Bank{})
	require.NoError(t, h.Create(context.Background(), "acct"))
	srv := httptest.NewServer(host.Handler(h))
	defer srv.Close()
	for name, c := range map[string]struct {
		path, body string
		status     int
		typ        string
	}{
		"unknown field":  {"/v1/worlds/acct/commands", `{"key":"k","payload":{},"extra":1}`, 400, host.ProblemInvalid},
		"trailing data":  {"/v1/worlds/acct/commands", `{"key":"k","payload":{}} {}`, 400, host.ProblemInvalid},
		"not JSON":       {"/v1/worlds/acct/commands", `hello`, 400, host.ProblemInvalid},
		"too large":      {"/v1/worlds/acct/commands", `{"key":"k","payload":"` + strings.Repeat("x", 2<<20) + `"}`, 400, host.ProblemInvalid},
		"bad world":      {"/v1/worlds/a%20b/commands", `{"key":"k","payload":{}}`, 400, host.ProblemInvalid},
		"no key":         {"/v1/worlds/acct/commands", `{"payload":{}}`, 400, host.ProblemInvalid},
		"handoff no one": {"/v1/worlds/acct/handoff", `{"to":""}`, 400, host.ProblemInvalid},
	} {
		resp, err := http.Post(srv.URL+c.path, "application/json", strings.NewReader(c.body))
		require.NoError(t, err, name)
		var p host.Problem
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&p), name)
		resp.Body.Close()
		require.Equal(t, c.status, resp.StatusCode, name)
		require.Equal(t, c.typ, p.Type, name)
		require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"), name)
	}
	require.Len(t, journalOf(t, d, "acct"), 2, "nothing journaled past the grant and first renewal")
}
