package lease_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

const (
	maxD = time.Duration(math.MaxInt64)
	minD = time.Duration(math.MinInt64)
)

func TestAddSubSat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b     time.Duration
		add, sub time.Duration
	}{
		{1, 2, 3, -1},
		{maxD, 1, maxD, maxD - 1},
		{maxD, maxD, maxD, 0},
		{minD, -1, minD, minD + 1},
		{minD, minD, minD, 0},
		{maxD, minD, -1, maxD},
		{minD, maxD, -1, minD},
		{-1, minD, minD, maxD},
		{0, minD, minD, maxD},
		{-2, minD, minD, maxD - 1},
		{1, maxD, maxD, minD + 2},
	}
	for _, tc := range tests {
		require.Equal(t, tc.add, lease.AddSat(tc.a, tc.b), "AddSat(%d, %d)", tc.a, tc.b)
		require.Equal(t, tc.sub, lease.SubSat(tc.a, tc.b), "SubSat(%d, %d)", tc.a, tc.b)
	}
}

func TestMulSat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    time.Duration
		n    int64
		want time.Duration
	}{
		{time.Second, 3, 3 * time.Second},
		{time.Second, 0, 0},
		{0, math.MaxInt64, 0},
		{maxD, 2, maxD},
		{maxD, -2, minD},
		{minD, -1, maxD},
		{-1, math.MinInt64, maxD},
		{minD, 1, minD},
		{maxD, -1, -maxD},
		{time.Hour, math.MaxInt64 / 2, maxD},
		{-time.Hour, math.MaxInt64 / 2, minD},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, lease.MulSat(tc.d, tc.n), "MulSat(%d, %d)", tc.d, tc.n)
	}
}

func TestUntil(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, time.Minute, lease.Until(now.Add(time.Minute), now))
	require.Equal(t, time.Duration(0), lease.Until(now, now))
	require.Equal(t, time.Duration(0), lease.Until(now.Add(-time.Hour), now), "a past deadline gives 0")
	require.Equal(t, time.Duration(0), lease.Until(time.Time{}, now), "a zero deadline is long past")
	require.Equal(t, maxD, lease.Until(now, time.Time{}), "saturates rather than wrapping")
}

func TestAddTimeSaturates(t *testing.T) {
	t.Parallel()
	// Walk past both ends of time.Time's range (int64 seconds since year 1)
	// in the largest steps a Duration allows: every step must stay ordered,
	// and the walk must end pinned within a second of the edge.
	const unixToInternal = 62135596800 // seconds from year 1 to 1970
	stepSec := int64(maxD / time.Second)
	walks := []struct {
		from time.Time
		step time.Duration
	}{
		{time.Unix(math.MaxInt64-unixToInternal-3*stepSec, 0), maxD},
		{time.Unix(math.MinInt64, 0), minD}, // about 7 steps from the edge
	}
	for _, w := range walks {
		at := w.from
		for range 10 {
			next := lease.AddTime(at, w.step)
			if w.step > 0 {
				require.False(t, next.Before(at), "AddTime wrapped at %v", at)
			} else {
				require.False(t, next.After(at), "AddTime wrapped at %v", at)
			}
			at = next
		}
		moved := lease.AddTime(at, w.step).Sub(at)
		require.Less(t, moved.Abs(), time.Second, "the walk did not reach the edge")
	}

	now := time.Now() // carries a monotonic reading
	require.False(t, lease.AddTime(now, maxD).Before(now))
	require.False(t, lease.AddTime(now, minD).After(now))
	require.Equal(t, time.Minute, lease.AddTime(now, time.Minute).Sub(now))
}
