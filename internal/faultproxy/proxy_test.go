package faultproxy_test

import (
	"crypto/rand"
	"crypto/sha256"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/faultproxy"
)

func TestPassThroughUnchangedAndInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)

	// Several connections at once, each sending a few MiB and then a FIN:
	// every byte must come back in order and the EOF must follow it.
	const conns, size = 3, 2 << 20
	var wg sync.WaitGroup
	for range conns {
		c := b.dial(t)
		want := make([]byte, size)
		_, _ = rand.Read(want)
		require.NoError(t, c.SetDeadline(time.Now().Add(ioTimeout)))

		wg.Go(func() {
			_, err := c.Write(want)
			require.NoError(t, err)
			require.NoError(t, c.CloseWrite())
		})
		wg.Go(func() {
			got, err := io.ReadAll(c) // to EOF: the FIN travelled both ways
			require.NoError(t, err)
			require.Equal(t, sha256.Sum256(want), sha256.Sum256(got))
		})
	}
	wg.Wait()

	st := b.proxy.Stats()
	require.Equal(t, int64(conns), st.Accepted)
	require.Equal(t, int64(conns*size), st.BytesToTarget)
	require.Equal(t, int64(conns*size), st.BytesToClient)
	require.Zero(t, st.BytesDropped)
}

func TestNewRejectsTargetWithoutPort(t *testing.T) {
	t.Parallel()
	_, err := faultproxy.New("localhost")
	require.Error(t, err)
}

func TestUnreachableTargetResetsClient(t *testing.T) {
	t.Parallel()
	// A port that was just free: nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	target := ln.Addr().String()
	require.NoError(t, ln.Close())

	p, err := faultproxy.New(target)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Close()) })

	// The reset can race the client's own connect, so the error shows at
	// the dial or at the first read.
	c, err := net.DialTimeout("tcp", p.Addr(), ioTimeout)
	if err == nil {
		t.Cleanup(func() { _ = c.Close() })
		require.NoError(t, c.SetReadDeadline(time.Now().Add(ioTimeout)))
		_, err = c.Read(make([]byte, 1))
	}
	require.ErrorIs(t, err, syscall.ECONNRESET)
}

func TestCloseIsIdempotentAndStopsListening(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.dial(t)
	roundTrip(t, c, "hello")

	require.NoError(t, b.proxy.Close())
	require.NoError(t, b.proxy.Close())

	require.NoError(t, c.SetReadDeadline(time.Now().Add(ioTimeout)))
	_, err := c.Read(make([]byte, 1))
	require.Error(t, err, "a connection through a closed proxy is closed")

	_, err = net.DialTimeout("tcp", b.proxy.Addr(), ioTimeout)
	require.Error(t, err)
	require.Zero(t, b.proxy.Stats().Open)
}
