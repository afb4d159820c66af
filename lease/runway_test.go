package lease_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

func TestRunway(t *testing.T) {
	t.Parallel()
	run := lease.RunDefaults() // T_lease 90s, S 15s
	send := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		send time.Time
		now  time.Time
		tm   lease.Timing
		want time.Duration
	}{
		{"at send", send, send, run, 75 * time.Second},
		{"mid term", send, send.Add(30 * time.Second), run, 45 * time.Second},
		{"at T_lease - S", send, send.Add(75 * time.Second), run, 0},
		{"inside S", send, send.Add(80 * time.Second), run, 0},
		{"long expired", send, send.Add(1000 * time.Hour), run, 0},
		{"no confirmed write", time.Time{}, send, run, 0},
		{"now before send (clock confusion) is still bounded", send, send.Add(-time.Hour), run, time.Hour + 75*time.Second},
		{"zero now saturates", send, time.Time{}, run, maxD - 15*time.Second},
		{"extreme lease saturates", send, send, lease.Timing{Lease: maxD, Skew: time.Second}, maxD - time.Second},
		{"extreme skew gives 0", send, send, lease.Timing{Lease: time.Second, Skew: maxD}, 0},
		{"negative skew is saturated too", send, send, lease.Timing{Lease: maxD, Skew: minD}, maxD},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, lease.Runway(tc.send, tc.now, tc.tm), tc.name)
	}
}

// TestRunwayMonotonicClock checks runway is measured on the monotonic
// reading: a wall-clock step between send and now must not change it.
func TestRunwayMonotonicClock(t *testing.T) {
	t.Parallel()
	send := time.Now()
	now := send.Add(10 * time.Second)
	stepped := now.Round(0).Add(-time.Hour) // wall clock stepped back; monotonic reading dropped
	require.Equal(t, 65*time.Second, lease.Runway(send, now, lease.RunDefaults()))
	require.NotEqual(t, 65*time.Second, lease.Runway(send, stepped, lease.RunDefaults()),
		"without the monotonic reading the step leaks in, which is why both ends must share one clock")
}

func BenchmarkRunway(b *testing.B) {
	tm := lease.RunDefaults()
	send := time.Now()
	now := send.Add(30 * time.Second)
	b.ReportAllocs()
	var sink time.Duration
	for b.Loop() {
		sink = lease.Runway(send, now, tm)
	}
	_ = sink
}
