package server_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/server"
)

// TestServeShutsDownInOrder: Serve on a real loopback listener; told to
// stop while a claim long-polls, it answers that claim (empty, not cut
// off), closes the client — reclaimer, sweep, store — and reports it.
func TestServeShutsDownInOrder(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	c, err := leasehold.NewClient(t.Context(), stores[0].open(t), leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	s, err := server.New(c, server.Config{Clock: clk, ClaimPoll: time.Hour, MaxClaimWait: time.Hour})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	type result struct {
		rep server.ShutdownReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := s.Serve(ctx, ln, 30*time.Second)
		done <- result{rep, err}
	}()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	b := (&testBundle{c: c, s: s, url: "http://" + ln.Addr().String()}).withToken(t, tr, "admin")
	b.enqueue(t, "q", `{}`)
	b.claimOne(t, "q", "o")
	polling := b.postAsync(t, "/v1/runs/claim", map[string]any{"queue": "q", "owner": "o", "wait_ms": 3_600_000})
	clk.BlockUntil(2) // the long poll waits on its timer (the other: the remote leases' drain, from the first claim on)

	stop()
	r := <-polling
	require.NoError(t, r.err)
	var got runsBody
	r.ok(t, &got)
	require.Empty(t, got.Runs, "a long poll answers what it has when the server stops")
	res := <-done
	require.NoError(t, res.err)
	require.False(t, res.rep.CutOff)
	require.NoError(t, res.rep.ClientCloseErr)
	require.Equal(t, int64(1), res.rep.Claimed)
	require.GreaterOrEqual(t, res.rep.InFlight, int64(1), "the long poll was in flight")
	text := res.rep.String()
	require.Contains(t, text, "stopped claiming")
	require.Contains(t, text, "requests in flight at the stop, all answered")
	require.Contains(t, text, "store closed")
	_, err = c.Run(context.Background(), 1)
	require.Error(t, err, "Serve closed the client and its store")
}

// TestAStoppingServerRefusesClaimsAndReadiness: once shutdown began, a new
// claim is the closed problem and /readyz says not ready, so a load
// balancer stops sending runners here.
func TestAStoppingServerRefusesClaimsAndReadiness(t *testing.T) {
	t.Parallel()
	b := setup(t, stores[0].open, leasehold.Config{}, server.Config{})
	b.enqueue(t, "q", `{}`)
	b.s.BeginStopping()
	b.post(t, "/v1/runs/claim", map[string]any{"queue": "q", "owner": "o"}).problem(t, "closed")
	r := b.get(t, "/readyz")
	require.Equal(t, http.StatusServiceUnavailable, r.status)
	r.problem(t, "closed")
	var st struct{ Status string }
	b.get(t, "/healthz").ok(t, &st)
	require.Equal(t, "ok", st.Status, "alive while it drains")
}
