package clock_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
)

// TestRealSmoke is the one test that waits on real time: it only checks that
// Real is wired to package time. Behaviour is tested on the Fake.
func TestRealSmoke(t *testing.T) {
	t.Parallel()
	c := clock.Real()
	start := c.Now()
	require.True(t, strings.Contains(start.String(), " m="), "Now must keep the monotonic reading: %s", start)

	const d = time.Millisecond
	within := func(ch <-chan time.Time, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			require.FailNow(t, what+" never fired")
		}
	}

	_, timerC := c.NewTimer(d)
	within(timerC, "timer")

	tk, tickC := c.NewTicker(d)
	within(tickC, "ticker")
	tk.Stop()

	ran := make(chan time.Time)
	c.AfterFunc(d, func() { close(ran) })
	within(ran, "AfterFunc")

	stopped := c.AfterFunc(time.Hour, func() {})
	require.True(t, stopped.Stop())
	require.GreaterOrEqual(t, c.Since(start), d)
}
