package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
)

func TestFakeTimerFiresAtDueTime(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	_, ch := clk.NewTimer(10 * time.Second)
	require.Equal(t, 1, clk.PendingTimers())

	clk.Advance(10*time.Second - 1)
	_, ok := received(ch)
	require.False(t, ok, "fired before its due time")

	clk.Advance(1)
	v, ok := received(ch)
	require.True(t, ok)
	require.Equal(t, epoch.Add(10*time.Second), v)
	require.Equal(t, 0, clk.PendingTimers())
}

func TestFakeNonPositiveDurationsFireOnNextAdvance(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{0, -time.Second} {
		clk := clock.NewFake(epoch)
		_, ch := clk.NewTimer(d)
		ran := false
		clk.AfterFunc(d, func() { ran = true })

		_, ok := received(ch)
		require.False(t, ok, "d=%v: delivered before any Advance", d)
		require.False(t, ran, "d=%v: AfterFunc ran inside AfterFunc", d)

		clk.Advance(0)
		v, ok := received(ch)
		require.True(t, ok, "d=%v", d)
		require.Equal(t, epoch, v, "d=%v: a past due time is clamped to now", d)
		require.True(t, ran, "d=%v", d)
	}
}

func TestFakeTimerStopAndReset(t *testing.T) {
	t.Parallel()
	const d = 5 * time.Second

	t.Run("stop armed", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(epoch)
		tm, ch := clk.NewTimer(d)
		require.True(t, tm.Stop())
		require.False(t, tm.Stop(), "second Stop stops nothing")
		clk.Advance(time.Hour)
		_, ok := received(ch)
		require.False(t, ok)
	})

	t.Run("stop fired but unreceived drains the channel", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(epoch)
		tm, ch := clk.NewTimer(d)
		clk.Advance(d)
		require.True(t, tm.Stop(), "an unreceived value counts as not yet fired (Go 1.23)")
		_, ok := received(ch)
		require.False(t, ok, "stale value after Stop")
	})

	t.Run("stop fired and received", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(epoch)
		tm, ch := clk.NewTimer(d)
		clk.Advance(d)
		_, ok := received(ch)
		require.True(t, ok)
		require.False(t, tm.Stop())
	})

	t.Run("reset armed moves the due time", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(epoch)
		tm, ch := clk.NewTimer(d)
		clk.Advance(4 * time.Second)
		require.True(t, tm.Reset(d))
		clk.Advance(4 * time.Second)
		_, ok := received(ch)
		require.False(t, ok, "fired at its old due time")
		clk.Advance(time.Second)
		v, ok := received(ch)
		require.True(t, ok)
		require.Equal(t, epoch.Add(9*time.Second), v)
	})

	t.Run("reset after received fires again", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(epoch)
		tm, ch := clk.NewTimer(d)
		clk.Advance(d)
		_, _ = received(ch)
		require.False(t, tm.Reset(d))
		clk.Advance(d)
		v, ok := received(ch)
		require.True(t, ok)
		require.Equal(t, epoch.Add(2*d), v)
	})

	t.Run("reset after unreceived drops the stale value", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(epoch)
		tm, ch := clk.NewTimer(d)
		clk.Advance(d)
		require.True(t, tm.Reset(d))
		_, ok := received(ch)
		require.False(t, ok, "stale value after Reset")
		require.Equal(t, 1, clk.PendingTimers())
	})

	t.Run("AfterFunc stop and reset", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(epoch)
		runs := 0
		tm := clk.AfterFunc(d, func() { runs++ })
		require.True(t, tm.Stop())
		clk.Advance(time.Hour)
		require.Equal(t, 0, runs)

		require.False(t, tm.Reset(d), "a stopped AfterFunc was not active")
		clk.Advance(d)
		require.Equal(t, 1, runs)
		require.False(t, tm.Stop(), "already ran")
		require.False(t, tm.Reset(d))
		clk.Advance(d)
		require.Equal(t, 2, runs)
	})
}

func TestFakeFiresInDueOrderThenCreationOrder(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	type fire struct {
		name string
		at   time.Duration
	}
	var got []fire
	after := func(name string, d time.Duration) {
		clk.AfterFunc(d, func() { got = append(got, fire{name, clk.Since(epoch)}) })
	}
	after("a", 3*time.Second)
	after("b", time.Second)
	after("c", 2*time.Second)
	after("d", time.Second)
	after("e", 2*time.Second)

	// A channel timer tied with AfterFuncs on either side of it in creation
	// order: the earlier one must see the channel empty, the later one full.
	var before, afterward bool
	clk.AfterFunc(4*time.Second, func() { before = clk.PendingTimers() == 2 })
	_, ch := clk.NewTimer(4 * time.Second)
	clk.AfterFunc(4*time.Second, func() { afterward = len(ch) == 1 })

	clk.Advance(time.Minute)
	require.Equal(t, []fire{
		{"b", time.Second}, {"d", time.Second},
		{"c", 2 * time.Second}, {"e", 2 * time.Second},
		{"a", 3 * time.Second},
	}, got, "Now inside a callback is its due time")
	require.True(t, before, "the earlier-created AfterFunc ran before the timer fired")
	require.True(t, afterward, "the later-created AfterFunc ran after the timer fired")
	require.Equal(t, epoch.Add(time.Minute), clk.Now())
}

func TestFakeEverythingDueFiresInOneAdvance(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	const n = 100
	chans := make([]<-chan time.Time, n)
	for i := range chans {
		_, chans[i] = clk.NewTimer(time.Duration(i*7919%n) * time.Millisecond)
	}
	clk.Advance(n * time.Millisecond)
	for i, ch := range chans {
		_, ok := received(ch)
		require.True(t, ok, "timer %d", i)
	}
	require.Equal(t, 0, clk.PendingTimers())
}

func TestFakeSet(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	_, ch := clk.NewTimer(10 * time.Second)

	clk.Set(epoch.Add(-time.Hour))
	require.Equal(t, epoch.Add(-time.Hour), clk.Now())
	_, ok := received(ch)
	require.False(t, ok, "a backward step fires nothing")
	require.Equal(t, 1, clk.PendingTimers(), "timers keep their absolute due time")

	clk.Set(epoch.Add(10 * time.Second))
	v, ok := received(ch)
	require.True(t, ok)
	require.Equal(t, epoch.Add(10*time.Second), v)
}

func TestFakeAdvanceRejectsNegative(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	require.Panics(t, func() { clk.Advance(-1) })
	require.Equal(t, epoch, clk.Now())
}

func TestFakeZeroValueIsUsable(t *testing.T) {
	t.Parallel()
	var clk clock.Fake
	_, ch := clk.NewTimer(time.Second)
	clk.Advance(time.Second)
	v, ok := received(ch)
	require.True(t, ok)
	require.Equal(t, time.Time{}.Add(time.Second), v)
}
