package faultproxy_test

import (
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLatencyDelaysEachDirection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.dial(t)
	roundTrip(t, c, "warm")

	const d = 100 * time.Millisecond
	b.proxy.SetLatency(d, 0)
	start := time.Now()
	roundTrip(t, c, "x")
	require.GreaterOrEqual(t, time.Since(start), 2*d, "one round trip crosses the proxy twice")

	b.proxy.SetLatency(0, 0)
	start = time.Now()
	roundTrip(t, c, "y")
	// Under 2d, which the delayed round trip cannot be: loose enough for a
	// loaded machine, tight enough to show the delay is gone.
	require.Less(t, time.Since(start), 2*d, "latency is removed at runtime")
}

func TestJitterNeverReorders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.dial(t)
	require.NoError(t, c.SetDeadline(time.Now().Add(ioTimeout)))

	// Jitter much larger than the gap between writes: without the ordering
	// clamp, later chunks would often be due before earlier ones.
	b.proxy.SetLatency(time.Millisecond, 30*time.Millisecond)

	const n = 150
	done := make(chan error, 1)
	go func() {
		for i := range uint32(n) {
			if _, err := c.Write(binary.BigEndian.AppendUint32(nil, i)); err != nil {
				done <- err
				return
			}
			// Pacing, not waiting: the gap makes each counter its own
			// chunk at the proxy, so each gets its own jitter.
			time.Sleep(time.Millisecond)
		}
		done <- nil
	}()

	got := make([]byte, 4*n)
	_, err := io.ReadFull(c, got)
	require.NoError(t, err)
	require.NoError(t, <-done)
	for i := range uint32(n) {
		require.Equal(t, i, binary.BigEndian.Uint32(got[4*i:]), "counter %d out of order", i)
	}
}
