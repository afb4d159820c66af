package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
)

func TestFakeAfterFuncRearmsFromItsCallback(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	var fires []time.Duration
	var tm clock.Timer
	tm = clk.AfterFunc(time.Second, func() {
		fires = append(fires, clk.Since(epoch))
		if len(fires) < 5 {
			require.False(t, tm.Reset(time.Second), "a running callback's timer is no longer armed")
		}
	})

	clk.Advance(10 * time.Second)
	require.Equal(t, []time.Duration{
		time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second,
	}, fires, "each re-arm is measured from its own due time")
	require.Equal(t, 0, clk.PendingTimers())
	require.Equal(t, epoch.Add(10*time.Second), clk.Now())
}

func TestFakeAfterFuncCallbackMayUseTheClock(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	var chained bool
	var ch <-chan time.Time
	clk.AfterFunc(time.Second, func() {
		_ = clk.Now()
		_ = clk.PendingTimers()
		_, ch = clk.NewTimer(time.Hour)
		// Due at once, so it still fires within the same Advance.
		clk.AfterFunc(0, func() { chained = true })
	})
	clk.Advance(time.Second)
	require.True(t, chained)
	require.NotNil(t, ch)
	require.Equal(t, 1, clk.PendingTimers())
}

func TestFakeAfterFuncPanicLeavesTheClockUsable(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	clk.AfterFunc(time.Second, func() { panic("boom") })
	require.PanicsWithValue(t, "boom", func() { clk.Advance(time.Second) })

	// The lock was released properly: the clock still works.
	_, ch := clk.NewTimer(0)
	clk.Advance(0)
	_, ok := received(ch)
	require.True(t, ok)
}

func TestFakeAfterFuncRejectsNil(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	require.Panics(t, func() { clk.AfterFunc(time.Second, nil) })
}
