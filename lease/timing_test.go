package lease_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

func TestDefaultsAreValid(t *testing.T) {
	t.Parallel()
	for name, tm := range map[string]lease.Timing{
		"runs":   lease.RunDefaults(),
		"worlds": lease.WorldDefaults(),
	} {
		require.NoError(t, tm.Validate(), name)
		require.Equal(t, tm, lease.Timing{}.WithDefaults(tm), "%s: zero Timing takes every default", name)
		require.Equal(t, tm.Drain, tm.Margin, "%s: the margin defaults to T_drain", name)
	}
}

func TestDefaultValues(t *testing.T) {
	t.Parallel()
	require.Equal(t, lease.Timing{
		Lease: 90 * time.Second, Renew: 15 * time.Second, Drain: 5 * time.Second,
		Stop: 45 * time.Second, Skew: 15 * time.Second, Poll: time.Second, Margin: 5 * time.Second,
	}, lease.RunDefaults())
	require.Equal(t, lease.Timing{
		Lease: 30 * time.Second, Renew: 5 * time.Second, Drain: time.Second,
		Stop: 15 * time.Second, Skew: 5 * time.Second, Poll: time.Second, Margin: time.Second,
	}, lease.WorldDefaults())
}

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	run := lease.RunDefaults()
	tests := []struct {
		name string
		in   lease.Timing
		defs lease.Timing
		want lease.Timing
	}{
		{
			name: "set fields are kept",
			in:   lease.Timing{Lease: 60 * time.Second, Poll: 2 * time.Second, Margin: 3 * time.Second},
			defs: run,
			want: lease.Timing{Lease: 60 * time.Second, Renew: 15 * time.Second, Drain: 5 * time.Second,
				Stop: 45 * time.Second, Skew: 15 * time.Second, Poll: 2 * time.Second, Margin: 3 * time.Second},
		},
		{
			name: "margin follows a drain the caller chose",
			in:   lease.Timing{Drain: 2 * time.Second},
			defs: run,
			want: lease.Timing{Lease: 90 * time.Second, Renew: 15 * time.Second, Drain: 2 * time.Second,
				Stop: 45 * time.Second, Skew: 15 * time.Second, Poll: time.Second, Margin: 2 * time.Second},
		},
		{
			name: "margin falls back to the defaults' drain",
			in:   lease.Timing{},
			defs: lease.Timing{Lease: time.Minute, Drain: 3 * time.Second},
			want: lease.Timing{Lease: time.Minute, Drain: 3 * time.Second, Margin: 3 * time.Second},
		},
		{
			name: "negative values are kept for Validate to report",
			in:   lease.Timing{Renew: -time.Second},
			defs: run,
			want: lease.Timing{Lease: 90 * time.Second, Renew: -time.Second, Drain: 5 * time.Second,
				Stop: 45 * time.Second, Skew: 15 * time.Second, Poll: time.Second, Margin: 5 * time.Second},
		},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, tc.in.WithDefaults(tc.defs), tc.name)
	}
}

func TestMaxEffectAndCheckEffect(t *testing.T) {
	t.Parallel()
	run := lease.RunDefaults()
	require.Equal(t, 40*time.Second, run.MaxEffect(), "min(90s - 15s - 15s - 5s, 45s - 5s)")
	require.Equal(t, 14*time.Second, lease.WorldDefaults().MaxEffect(), "min(30s - 5s - 5s - 1s, 15s - 1s)")
	long := lease.Timing{Lease: 10 * time.Minute, Renew: 15 * time.Second, Drain: 5 * time.Second, Stop: 5 * time.Minute,
		Skew: 15 * time.Second, Poll: time.Second, Margin: 5 * time.Second}
	require.NoError(t, long.Validate())
	require.Equal(t, 4*time.Minute+55*time.Second, long.MaxEffect(), "min(10m - 15s - 15s - 5s, 5m - 5s): the gate's term binds")
	short := lease.Timing{Lease: 60 * time.Second, Renew: 15 * time.Second, Drain: 5 * time.Second, Stop: 40 * time.Second,
		Skew: 15 * time.Second, Poll: time.Second, Margin: time.Second}
	require.NoError(t, short.Validate())
	require.Equal(t, 25*time.Second, short.MaxEffect(), "min(60s - 15s - 15s - 5s, 40s - 1s): the runway term binds")
	require.Equal(t, time.Duration(0), lease.Timing{Lease: time.Second, Skew: time.Minute}.MaxEffect(),
		"saturates at 0")

	require.NoError(t, run.CheckEffect(time.Nanosecond))
	require.NoError(t, run.CheckEffect(40*time.Second))

	for _, tc := range []struct {
		maxDur time.Duration
		want   string
	}{
		{0, "effect max duration 0s must be > 0"},
		{-time.Second, "effect max duration -1s must be > 0"},
		{40*time.Second + 1, "exceeds min(T_lease (1m30s) - S (15s) - T_renew (15s) - T_drain (5s) = 55s, D_stop (45s) - margin (5s) = 40s) = 40s"},
	} {
		err := run.CheckEffect(tc.maxDur)
		require.ErrorIs(t, err, lease.ErrEffectDuration, "maxDur %v", tc.maxDur)
		require.ErrorContains(t, err, tc.want)
	}
}
