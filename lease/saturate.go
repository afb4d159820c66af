package lease

import (
	"math"
	"time"
)

// Lease arithmetic saturates instead of wrapping: a configured value near
// the limits, a zero time or a deadline long past must give a clamped,
// still-ordered answer. A wrapped sum would turn "far in the future" into
// "long ago" — an expired lease looking valid, or the reverse — and a panic
// would take a holder down in the middle of its upkeep.

// AddSat returns a + b, clamped to the range of time.Duration.
func AddSat(a, b time.Duration) time.Duration {
	sum := a + b
	switch {
	case a > 0 && b > 0 && sum < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && sum >= 0:
		return math.MinInt64
	}
	return sum
}

// SubSat returns a - b, clamped to the range of time.Duration.
func SubSat(a, b time.Duration) time.Duration {
	if b == math.MinInt64 {
		// -b does not exist. a - MinInt64 = a + MaxInt64 + 1, which only
		// fits when a is negative.
		if a >= 0 {
			return math.MaxInt64
		}
		return (a + math.MaxInt64) + 1
	}
	return AddSat(a, -b)
}

// MulSat returns d * n, clamped to the range of time.Duration.
func MulSat(d time.Duration, n int64) time.Duration {
	if d == 0 || n == 0 {
		return 0
	}
	product := d * time.Duration(n)
	// Division undoes the multiplication exactly unless it overflowed. The
	// one case it cannot detect is MinInt64 * -1, which wraps to MinInt64
	// and divides back to MinInt64, so it is checked by hand.
	overflow := product/time.Duration(n) != d ||
		(d == math.MinInt64 && n == -1) || (n == math.MinInt64 && d == -1)
	if !overflow {
		return product
	}
	if (d < 0) != (n < 0) {
		return math.MinInt64
	}
	return math.MaxInt64
}

// Until returns how long remains from now to deadline, never negative: a
// deadline already past gives 0. deadline.Sub(now) itself saturates.
func Until(deadline, now time.Time) time.Duration {
	return max(deadline.Sub(now), 0)
}

// AddTime returns t + d, never wrapping past either end of time.Time's
// range: for d >= 0 the result is never before t, for d <= 0 never after.
// time.Time.Add already saturates its seconds (and drops the monotonic
// reading rather than wrap it), but not its nanoseconds, so at the very edge
// of the range a sum can land up to a second on the wrong side of t; t is
// returned then, as it is already within a second of the edge.
func AddTime(t time.Time, d time.Duration) time.Time {
	sum := t.Add(d)
	if (d > 0 && sum.Before(t)) || (d < 0 && sum.After(t)) {
		return t
	}
	return sum
}
