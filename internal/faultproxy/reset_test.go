package faultproxy_test

import (
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestResetAllResetsEveryConnection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, c := b.dial(t), b.dial(t)
	roundTrip(t, a, "a")
	roundTrip(t, c, "c")

	b.proxy.ResetAll()
	require.Zero(t, b.proxy.Stats().Open)

	for _, conn := range []*net.TCPConn{a, c} {
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(ioTimeout)))
		_, err := conn.Read(make([]byte, 1))
		require.ErrorIs(t, err, syscall.ECONNRESET, "SO_LINGER 0 sends RST, not FIN")
	}

	roundTrip(t, b.dial(t), "after reset")
}
