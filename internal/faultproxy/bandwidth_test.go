package faultproxy_test

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBandwidthLimitsEachDirection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.dial(t)
	roundTrip(t, c, "warm")

	// 200 KiB at 100 KiB/s: about 2 s, as the echo's way back is paced in
	// step with the way out. The bound leaves room for the first slice,
	// which goes at once.
	const rate, size = 100 << 10, 200 << 10
	b.proxy.SetBandwidth(rate)
	want := make([]byte, size)
	_, _ = rand.Read(want)

	start := time.Now()
	got := echoAll(t, c, want)
	elapsed := time.Since(start)
	require.True(t, bytes.Equal(want, got))
	require.GreaterOrEqual(t, elapsed, 1500*time.Millisecond)
	require.Less(t, elapsed, ioTimeout, "limit far stricter than asked")

	b.proxy.SetBandwidth(0)
	start = time.Now()
	got = echoAll(t, c, want)
	require.True(t, bytes.Equal(want, got))
	require.Less(t, time.Since(start), 1500*time.Millisecond, "unlimited again at runtime")
}

func TestBackpressureBoundsQueuedData(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.dial(t)

	// With everything stalled, a sender must soon block: the proxy queues
	// at most 8 MiB per direction, plus what the kernel buffers on loopback.
	b.proxy.Stall(time.Hour)
	want := make([]byte, 64<<20)
	_, _ = rand.Read(want)
	require.NoError(t, c.SetWriteDeadline(time.Now().Add(500*time.Millisecond)))
	n, err := c.Write(want)
	require.Error(t, err, "the write should block until its deadline")
	require.Less(t, n, 40<<20)

	// Nothing accepted is lost: once the stall ends, all n bytes come back.
	b.proxy.Stall(0)
	require.NoError(t, c.SetDeadline(time.Now().Add(ioTimeout)))
	got := make([]byte, n)
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want[:n], got))
}

// echoAll writes data and reads as much back, concurrently, as an echo
// through the proxy needs both ways flowing at once.
func echoAll(t *testing.T, c net.Conn, data []byte) []byte {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(ioTimeout)))
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(data)
		werr <- err
	}()
	got := make([]byte, len(data))
	_, err := io.ReadFull(c, got)
	require.NoError(t, err)
	require.NoError(t, <-werr)
	return got
}
