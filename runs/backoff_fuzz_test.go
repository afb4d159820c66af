package runs

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzBackoffDelay: for any configuration, attempt and sample the delay is
// never negative and lies within ±Jitter/2 of min(Base·2^(attempt-1), Max)
// (computed here in exact arithmetic; a non-positive Base or Max and a
// Jitter zero, NaN or outside (0, 1] take the defaults). It never falls as attempts grow.
// The jitter is applied after the cap, so the delay may pass Max by up to
// Max·Jitter/2, as the doc comment says.
func FuzzBackoffDelay(f *testing.F) {
	f.Add(int64(time.Second), int64(time.Minute), 0.5, 4, 0.5)
	f.Add(int64(0), int64(0), 0.0, 1, 0.0)
	f.Add(int64(time.Second), int64(time.Hour), 1.0, math.MaxInt, 0.999)
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), 1.0, 2, 1.0)
	f.Add(int64(-1), int64(-1), -0.1, -5, -3.0)
	f.Add(int64(3), int64(math.MaxInt64), 0.25, 64, 2.0)
	f.Add(int64(time.Hour), int64(time.Second), 0.75, 1, 0.1)
	f.Fuzz(func(t *testing.T, base, maxD int64, jitter float64, attempt int, u float64) {
		b := Backoff{Base: time.Duration(base), Max: time.Duration(maxD), Jitter: jitter}
		d := b.Delay(attempt, u)
		require.GreaterOrEqual(t, d, time.Duration(0))

		capped := cappedDelay(b, attempt)
		j := b.Jitter
		if !(j > 0 && j <= 1) { // zero, NaN and out of range take the default
			j = 0.5
		}
		// Float rounding of a delay near 2^63 is worth a few µs.
		slack := float64(capped)*j/2 + float64(capped)/(1<<50) + 2
		require.InDelta(t, float64(capped), float64(d), slack,
			"Delay(%d, %v) of %+v = %v, uncapped-then-capped %v", attempt, u, b, d, capped)

		if attempt < math.MaxInt {
			next := b.Delay(attempt+1, u)
			require.GreaterOrEqual(t, float64(next), float64(d)-float64(d)/(1<<50)-2, "the delay fell from attempt %d to %d", attempt, attempt+1)
		}
	})
}

// cappedDelay is min(Base·2^(attempt-1), Max) with Backoff's defaults, in
// exact arithmetic.
func cappedDelay(b Backoff, attempt int) time.Duration {
	base, maxD := b.Base, b.Max
	if base <= 0 {
		base = time.Second
	}
	if maxD <= 0 {
		maxD = time.Hour
	}
	shift := max(attempt-1, 0)
	if shift > 70 {
		return maxD
	}
	v := new(big.Int).Lsh(big.NewInt(int64(base)), uint(shift))
	if v.Cmp(big.NewInt(int64(maxD))) > 0 {
		return maxD
	}
	return time.Duration(v.Int64())
}

// TestBackoffNaNJitter: a Jitter of NaN passes the 0..1 range check (every
// comparison with NaN is false), so it is kept, and float64(d)·NaN
// converted to a Duration is implementation-defined: on amd64 it is
// MinInt64, the saturating add makes the delay negative, and it is clamped
// to 0 — every retry is immediate. The doc says a Jitter outside 0..1
// takes the default 0.5; NaN should too.
func TestBackoffNaNJitter(t *testing.T) {
	t.Parallel()
	b := Backoff{Base: time.Second, Max: time.Minute, Jitter: math.NaN()}
	require.Equal(t, Backoff{Base: time.Second, Max: time.Minute, Jitter: 0.5}.Delay(4, 0.7), b.Delay(4, 0.7))
}

// TestBackoffZeroJitterTakesDefault: the doc comment says "Defaults: Base
// 1s, Max 1h, Jitter 0.5" and scheduler.WorkerConfig.Backoff says "Zero
// fields take runs.Backoff's defaults", but a zero Jitter is kept as no
// jitter at all: a zero-configured worker retries a wave of failures in
// lockstep, which the jitter exists to prevent. Either the doc or the code
// is wrong; this pins the doc's reading.
func TestBackoffZeroJitterTakesDefault(t *testing.T) {
	t.Parallel()
	require.Equal(t, Backoff{Base: time.Second, Max: time.Hour, Jitter: 0.5}.Delay(3, 0.9), Backoff{}.Delay(3, 0.9))
}
