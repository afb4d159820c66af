package faultproxy_test

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStallHoldsThenDeliversInOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.dial(t)
	roundTrip(t, c, "warm")

	const d = 400 * time.Millisecond
	start := time.Now()
	b.proxy.Stall(d)
	for _, part := range []string{"one ", "two ", "three"} {
		_, err := c.Write([]byte(part))
		require.NoError(t, err)
	}
	requireSilent(t, c, d/3)

	require.NoError(t, c.SetReadDeadline(time.Now().Add(ioTimeout)))
	got := make([]byte, len("one two three"))
	_, err := io.ReadFull(c, got)
	require.NoError(t, err)
	require.Equal(t, "one two three", string(got))
	require.GreaterOrEqual(t, time.Since(start), d)
}

func TestStallZeroReleasesHeldData(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.dial(t)

	b.proxy.Stall(time.Hour)
	_, err := c.Write([]byte("held"))
	require.NoError(t, err)
	requireSilent(t, c, 100*time.Millisecond)

	b.proxy.Stall(0)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(ioTimeout)))
	got := make([]byte, 4)
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	require.Equal(t, "held", string(got))
}
