package faultproxy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/leasehold/leasehold/internal/faultproxy"
)

// TestCloseLeaksNothing puts goroutines of the proxy in every kind of wait
// (a held chunk, a full queue, a write the target never reads, an idle
// read) and requires Close to end them all promptly.
//
// Not parallel: goleak.VerifyNone sees every goroutine in the process, and
// serial tests run before any parallel test is let go.
func TestCloseLeaksNothing(t *testing.T) {
	// Registered first so it runs last, after every other cleanup.
	t.Cleanup(func() { goleak.VerifyNone(t) })

	// A stalled proxy: chunks held in both directions, one idle link.
	b := setup(t)
	held := b.dial(t)
	roundTrip(t, held, "warm")
	b.dial(t) // idle: its readers block in Read
	b.proxy.Stall(time.Hour)
	_, err := held.Write([]byte("held"))
	require.NoError(t, err)

	// A proxy in front of a target that never reads: its writer blocks in
	// Write and, once 8 MiB are queued, its reader blocks on the queue.
	sink := startServer(t, sinkConn)
	blocked, err := faultproxy.New(sink.addr())
	require.NoError(t, err)
	c := dial(t, blocked.Addr())
	require.NoError(t, c.SetWriteDeadline(time.Now().Add(500*time.Millisecond)))
	n, err := c.Write(make([]byte, 64<<20))
	require.Error(t, err, "the sender should feel backpressure")
	require.Less(t, n, 64<<20)

	for _, p := range []*faultproxy.Proxy{b.proxy, blocked} {
		start := time.Now()
		require.NoError(t, p.Close())
		require.Less(t, time.Since(start), time.Second, "Close must not wait on a fault")
		require.Zero(t, p.Stats().Open)
	}
}
