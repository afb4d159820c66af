package faultproxy_test

import (
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBlackholeDropsThenResetsWhatItBroke(t *testing.T) {
	t.Parallel()
	b := setup(t)

	victim := b.dial(t)
	roundTrip(t, victim, "before")
	idle := b.dial(t)
	roundTrip(t, idle, "idle")

	b.proxy.SetBlackhole(true)
	_, err := victim.Write([]byte("lost"))
	require.NoError(t, err)
	requireSilent(t, victim, 200*time.Millisecond)

	// Connections are still accepted while the blackhole is on, but
	// nothing goes through them either.
	late := b.dial(t)
	_, err = late.Write([]byte("late"))
	require.NoError(t, err)
	requireSilent(t, late, 200*time.Millisecond)

	// Both writes must have reached the proxy (and been dropped) before the
	// blackhole lifts, or they would be forwarded instead.
	require.Eventually(t, func() bool {
		return b.proxy.Stats().BytesDropped >= int64(len("lost")+len("late"))
	}, ioTimeout, 5*time.Millisecond)

	b.proxy.SetBlackhole(false)

	// The streams that lost bytes cannot continue: they are reset.
	for _, c := range []*net.TCPConn{victim, late} {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(ioTimeout)))
		_, err := c.Read(make([]byte, 1))
		require.ErrorIs(t, err, syscall.ECONNRESET)
	}

	// A connection that lost nothing carries on, and new ones work.
	roundTrip(t, idle, "still here")
	roundTrip(t, b.dial(t), "fresh")
}
