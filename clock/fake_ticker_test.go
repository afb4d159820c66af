package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
)

func TestFakeTickerKeepsItsGrid(t *testing.T) {
	t.Parallel()
	const p = 10 * time.Second
	clk := clock.NewFake(epoch)
	_, ch := clk.NewTicker(p)

	clk.Advance(p)
	v, ok := received(ch)
	require.True(t, ok)
	require.Equal(t, epoch.Add(p), v)

	// Due at 20s and 30s: one delivery, the first, as a real ticker's
	// one-slot channel would hold; the next due time stays on the grid (40s),
	// not 35s+p.
	clk.Advance(25 * time.Second)
	v, ok = received(ch)
	require.True(t, ok)
	require.Equal(t, epoch.Add(20*time.Second), v)
	_, ok = received(ch)
	require.False(t, ok, "extra ticks must be dropped")

	clk.Advance(4 * time.Second)
	_, ok = received(ch)
	require.False(t, ok, "fired off its grid")
	clk.Advance(time.Second)
	v, ok = received(ch)
	require.True(t, ok)
	require.Equal(t, epoch.Add(40*time.Second), v)
	require.Equal(t, 1, clk.PendingTimers(), "a ticker stays armed")
}

func TestFakeTickerDropsTicksWhileUnread(t *testing.T) {
	t.Parallel()
	const p = time.Second
	clk := clock.NewFake(epoch)
	_, ch := clk.NewTicker(p)
	for range 5 {
		clk.Advance(p)
	}
	v, ok := received(ch)
	require.True(t, ok)
	require.Equal(t, epoch.Add(p), v, "the channel keeps the oldest tick")
	_, ok = received(ch)
	require.False(t, ok)
}

func TestFakeTickerReset(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	tk, ch := clk.NewTicker(10 * time.Second)
	clk.Advance(10 * time.Second) // leave a tick unread

	clk.Advance(5 * time.Second)
	tk.Reset(3 * time.Second)
	_, ok := received(ch)
	require.False(t, ok, "Reset must drop the stale tick")

	clk.Advance(3 * time.Second)
	v, ok := received(ch)
	require.True(t, ok)
	require.Equal(t, epoch.Add(18*time.Second), v)
	clk.Advance(3 * time.Second)
	v, ok = received(ch)
	require.True(t, ok)
	require.Equal(t, epoch.Add(21*time.Second), v, "the new period applies")

	require.Panics(t, func() { tk.Reset(0) })
}

func TestFakeTickerStop(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	tk, ch := clk.NewTicker(time.Second)
	clk.Advance(time.Second)
	tk.Stop()
	require.Equal(t, 0, clk.PendingTimers())
	_, ok := received(ch)
	require.False(t, ok, "Stop must drop the unread tick")
	clk.Advance(time.Hour)
	_, ok = received(ch)
	require.False(t, ok)
	tk.Stop() // idempotent
}

func TestFakeTickerRejectsNonPositive(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	require.Panics(t, func() { clk.NewTicker(0) })
	require.Panics(t, func() { clk.NewTicker(-time.Second) })
	require.Equal(t, 0, clk.PendingTimers())
}
