package faulttest

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// interval is a stretch of wall-clock time.
type interval struct{ from, to time.Time }

// clip is the part of i within [from, to] (empty if none).
func (i interval) clip(from, to time.Time) interval {
	if from.After(i.from) {
		i.from = from
	}
	if to.Before(i.to) {
		i.to = to
	}
	if i.to.Before(i.from) {
		i.to = i.from
	}
	return i
}

func (i interval) length() time.Duration { return max(i.to.Sub(i.from), 0) }

// unionLength is the time covered by any of is.
func unionLength(is ...interval) time.Duration {
	sort.Slice(is, func(a, b int) bool { return is[a].from.Before(is[b].from) })
	var total time.Duration
	var cur interval
	for _, i := range is {
		if i.length() == 0 {
			continue
		}
		if cur.length() == 0 || i.from.After(cur.to) {
			total += cur.length()
			cur = i
			continue
		}
		if i.to.After(cur.to) {
			cur.to = i.to
		}
	}
	return total + cur.length()
}

// TestUnionLength: overlapping stretches count once, disjoint ones add,
// empty ones count nothing.
func TestUnionLength(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	iv := func(a, b int) interval { return interval{at(a), at(b)} }
	for name, tc := range map[string]struct {
		in   []interval
		want time.Duration
	}{
		"none":        {nil, 0},
		"one":         {[]interval{iv(0, 10)}, 10 * time.Millisecond},
		"disjoint":    {[]interval{iv(20, 30), iv(0, 10)}, 20 * time.Millisecond},
		"overlapping": {[]interval{iv(0, 10), iv(5, 15)}, 15 * time.Millisecond},
		"nested":      {[]interval{iv(0, 30), iv(5, 15)}, 30 * time.Millisecond},
		"touching":    {[]interval{iv(0, 10), iv(10, 20)}, 20 * time.Millisecond},
		"empty ones":  {[]interval{iv(5, 5), {}, iv(0, 10)}, 10 * time.Millisecond},
	} {
		require.Equal(t, tc.want, unionLength(tc.in...), name)
	}
	require.Equal(t, iv(5, 10), iv(0, 10).clip(at(5), at(20)))
	require.Zero(t, iv(0, 10).clip(at(20), at(30)).length())
}
