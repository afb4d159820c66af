package clock_test

import (
	"time"
)

// epoch is an arbitrary start time, without a monotonic reading, so test
// expectations can be written as epoch.Add(...).
var epoch = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// received reports what ch holds right now, without waiting. Fake timers
// deliver inside Advance, so anything due is already in the channel.
func received(ch <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
		return time.Time{}, false
	}
}
