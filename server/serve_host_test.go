package server_test

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/server"
)

// TestServeStopsTheAttachedHost: told to stop, Serve stops the world host
// attached to it — its world loops end and its keeper drains — after the
// last request and before the client closes the store, and its report
// and log say so.
func TestServeStopsTheAttachedHost(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.DiscardHandler)
	d := stores[0].open(t)
	c, err := leasehold.NewClient(t.Context(), d, leasehold.Config{Logger: quiet})
	require.NoError(t, err)
	h, err := host.New(host.Config{Store: d, Node: "node-h", Program: programs.KV{}, Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, h.Create(t.Context(), "kv1"))
	var logs lockedBuffer
	s, err := server.New(c, server.Config{Host: h, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
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
		rep, err := s.Serve(ctx, ln, 10*time.Second)
		done <- result{rep, err}
	}()
	tr := &httpTransport{}
	defer tr.close()
	b := (&testBundle{c: c, s: s, url: "http://" + ln.Addr().String()}).withToken(t, tr.get(), "admin")
	var rep struct{ Position int64 }
	b.post(t, worldPath("kv1", "/commands"), map[string]any{"key": "c1", "payload": map[string]any{"op": "put", "key": "a", "value": 1}}).ok(t, &rep)
	require.Positive(t, rep.Position)

	stop()
	res := <-done
	require.NoError(t, res.err)
	require.True(t, res.rep.HostStopped)
	require.NoError(t, res.rep.HostStopErr)
	require.NoError(t, res.rep.ClientCloseErr)
	select {
	case <-h.Stopped():
	default:
		t.Fatal("the host is still running after Serve returned")
	}
	require.Contains(t, res.rep.String(), "world host stopped: world loops ended, its keeper drained")
	for _, step := range []string{"shutdown: stopped claiming", "shutdown: every in-flight request answered", "shutdown: world host stopped", "shutdown: client closed"} {
		require.Contains(t, logs.String(), step)
	}
}
