package doctor_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/doctor"
)

// Twenty probes a second apart, each 1ms long, read at its midpoint: probe i
// is at i×1.001s + 0.5ms.
const (
	probes = 20
	every  = time.Second
)

func TestInStepStoreClock(t *testing.T) {
	t.Parallel()
	f := &fakeStore{clk: clock.NewFake(epoch)}
	r := doctor.Analyze(sample(t, f, probes, every), runs)

	require.Equal(t, probes, r.Probes)
	require.Equal(t, 19*(every+time.Millisecond), r.Span)
	require.Equal(t, time.Duration(0), r.Offset)
	require.Equal(t, 500*time.Microsecond, r.OffsetBound)
	require.True(t, r.RateKnown)
	require.InDelta(t, 0, r.RatePPM(), 1e-6)
	require.Empty(t, r.Steps)
	require.Equal(t, time.Millisecond, r.RTTMin)
	require.Equal(t, time.Millisecond, r.RTTMedian)
	require.Equal(t, time.Millisecond, r.RTTMax)
	require.Equal(t, runs.Lease, r.Term)
	require.Equal(t, runs.Skew, r.Skew)
	require.NoError(t, r.CheckWriteBehind(runs))
}

// TestLargeOffsetIsReportedNotJudged: a store three hours ahead is shown,
// and does not matter (SPEC §1: offset is reported, never used).
func TestLargeOffsetIsReportedNotJudged(t *testing.T) {
	t.Parallel()
	f := &fakeStore{clk: clock.NewFake(epoch), offset: 3 * time.Hour}
	r := doctor.Analyze(sample(t, f, probes, every), runs)

	require.Equal(t, 3*time.Hour, r.Offset)
	require.InDelta(t, 0, r.RatePPM(), 1e-3)
	require.Empty(t, r.Steps)
	require.NoError(t, r.CheckWriteBehind(runs))
	require.Contains(t, r.String(), "offset:     +3h0m0s ± 500µs (store ahead; reported only, never used)")
}

func TestStoreClockRate(t *testing.T) {
	t.Parallel()
	t.Run("1000ppm fast drifts 90ms over a 90s term: within S", func(t *testing.T) {
		t.Parallel()
		f := &fakeStore{clk: clock.NewFake(epoch), rate: 1000e-6}
		r := doctor.Analyze(sample(t, f, probes, every), runs)

		require.InDelta(t, 1000, r.RatePPM(), 0.01)
		require.InDelta(t, 90*time.Millisecond, r.Drift, float64(10*time.Microsecond))
		require.Empty(t, r.Steps, "a steady rate is not a staircase of steps")
		require.NoError(t, r.CheckWriteBehind(runs))
		require.Contains(t, r.String(), "rate error: +1000.0 ppm ± ")
		require.Contains(t, r.String(), "(store fast): drift +90ms ± ")
	})
	for _, rate := range []float64{0.2, -0.2} {
		t.Run("20% off drifts 18s over a 90s term: refused", func(t *testing.T) {
			t.Parallel()
			f := &fakeStore{clk: clock.NewFake(epoch), rate: rate}
			r := doctor.Analyze(sample(t, f, probes, every), runs)
			require.Empty(t, r.Steps)
			require.InDelta(t, rate, r.Rate, 1e-9)

			err := r.CheckWriteBehind(runs)
			require.ErrorIs(t, err, doctor.ErrClockUnsafe)
			var se *doctor.SkewError
			require.ErrorAs(t, err, &se)
			require.True(t, se.DriftOver)
			require.Empty(t, se.Steps)
			sign := map[bool]string{true: "+", false: "-"}[rate > 0]
			require.Contains(t, err.Error(), "drift "+sign+"18s ± ")
			require.Contains(t, err.Error(), "over T_lease 1m30s: up to 18.")
			require.Contains(t, err.Error(), "> S 15s (rate "+sign+"200000.0 ppm)")
			t.Log(err)
		})
	}
}

func TestStoreClockSteps(t *testing.T) {
	t.Parallel()
	for _, size := range []time.Duration{20 * time.Second, -20 * time.Second} {
		t.Run("a step of "+size.String()+" is refused, named", func(t *testing.T) {
			t.Parallel()
			// Probe 10 is at 10.0105s, probe 11 at 11.0115s.
			f := &fakeStore{clk: clock.NewFake(epoch), offset: time.Minute, steps: []fakeStep{{at: 10500 * time.Millisecond, size: size}}}
			r := doctor.Analyze(sample(t, f, probes, every), runs)

			require.Len(t, r.Steps, 1)
			s := r.Steps[0]
			require.Equal(t, 11, s.Probe)
			require.Equal(t, 11*(every+time.Millisecond)+500*time.Microsecond, s.At)
			require.InDelta(t, size, s.Size, float64(time.Microsecond))
			require.InDelta(t, 0, r.RatePPM(), 1e-3, "the step is cut out of the rate fit")
			require.Equal(t, time.Minute+size, r.Offset, "the offset since the step")

			err := r.CheckWriteBehind(runs)
			require.ErrorIs(t, err, doctor.ErrClockUnsafe)
			var se *doctor.SkewError
			require.ErrorAs(t, err, &se)
			require.False(t, se.DriftOver)
			require.Len(t, se.Steps, 1)
			require.Contains(t, err.Error(), "step of "+signed(size)+" ± ")
			require.Contains(t, err.Error(), " at probe 11 (11.012s into the sample) > S 15s")
			t.Log(err)
		})
	}

	t.Run("a step within S is listed and allowed", func(t *testing.T) {
		t.Parallel()
		f := &fakeStore{clk: clock.NewFake(epoch), steps: []fakeStep{{at: 5 * time.Second, size: 5 * time.Second}}}
		r := doctor.Analyze(sample(t, f, probes, every), runs)

		require.Len(t, r.Steps, 1)
		require.Equal(t, 5, r.Steps[0].Probe)
		require.InDelta(t, 5*time.Second, r.Steps[0].Size, float64(time.Microsecond))
		require.NoError(t, r.CheckWriteBehind(runs))
		require.Contains(t, r.String(), "steps:      +5s ± ")
		require.Contains(t, r.String(), "at probe 5 (5.006s into the sample)")
	})

	t.Run("two steps and a rate are told apart", func(t *testing.T) {
		t.Parallel()
		f := &fakeStore{clk: clock.NewFake(epoch), rate: 500e-6, steps: []fakeStep{
			{at: 4500 * time.Millisecond, size: 3 * time.Second},
			{at: 12500 * time.Millisecond, size: -2 * time.Second},
		}}
		r := doctor.Analyze(sample(t, f, probes, every), runs)

		require.Len(t, r.Steps, 2)
		require.Equal(t, 5, r.Steps[0].Probe)
		require.InDelta(t, 3*time.Second, r.Steps[0].Size, float64(time.Microsecond))
		require.Equal(t, 13, r.Steps[1].Probe)
		require.InDelta(t, -2*time.Second, r.Steps[1].Size, float64(time.Microsecond))
		require.InDelta(t, 500, r.RatePPM(), 0.01)
		require.NoError(t, r.CheckWriteBehind(runs))
	})

	t.Run("drift and steps within one term add up", func(t *testing.T) {
		t.Parallel()
		// 10% fast: 9s over 90s; plus a step of 8s: 17s > S 15s.
		f := &fakeStore{clk: clock.NewFake(epoch), rate: 0.1, steps: []fakeStep{{at: 9500 * time.Millisecond, size: 8 * time.Second}}}
		r := doctor.Analyze(sample(t, f, probes, every), runs)
		require.Len(t, r.Steps, 1)

		err := r.CheckWriteBehind(runs)
		var se *doctor.SkewError
		require.ErrorAs(t, err, &se)
		require.False(t, se.DriftOver)
		require.Empty(t, se.Steps)
		require.InDelta(t, 17*time.Second, se.Together, float64(50*time.Millisecond))
		require.Contains(t, err.Error(), "drift +9s ± ")
		require.Contains(t, err.Error(), "plus steps of 8.")
		require.Contains(t, err.Error(), "within one term: 17.")
		t.Log(err)
	})
}

// TestJitterMakesNoSteps spreads the store's reading anywhere inside the
// round trip, including the adversarial pattern where consecutive probes err
// by their full bounds in opposite directions. None of it may be reported as
// a step, and the true rate and offset stay within the reported bounds.
func TestJitterMakesNoSteps(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	randRTTs, randFracs := make([]time.Duration, 97), make([]float64, 89)
	for i := range randRTTs {
		randRTTs[i] = time.Millisecond + time.Duration(rng.Int64N(int64(200*time.Millisecond)))
	}
	for i := range randFracs {
		randFracs[i] = rng.Float64()
	}
	cases := []struct {
		name   string
		rtts   []time.Duration
		fracs  []float64
		offset time.Duration
		rate   float64
		n      int
		every  time.Duration
	}{
		{"mixed", []time.Duration{2 * time.Millisecond, 100 * time.Millisecond, 30 * time.Millisecond, 70 * time.Millisecond}, []float64{0, 1, 0.2, 1}, 1500 * time.Millisecond, 0, probes, every},
		{"full bounds, opposite ways", []time.Duration{100 * time.Millisecond, 2 * time.Millisecond}, []float64{0, 1}, 0, 0, probes, every},
		{"full bounds, opposite ways, odd count, with a rate", []time.Duration{100 * time.Millisecond, 2 * time.Millisecond}, []float64{1, 0}, -time.Hour, 1000e-6, 21, every},
		{"random, close together", randRTTs, randFracs, 42 * time.Second, -300e-6, 60, 50 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeStore{clk: clock.NewFake(epoch), offset: tc.offset, rate: tc.rate, rtts: tc.rtts, fracs: tc.fracs}
			ps := sample(t, f, tc.n, tc.every)
			r := doctor.Analyze(ps, runs)

			require.Empty(t, r.Steps, "jitter within the probes' bounds is not a step:\n%s", r)
			// The reading may sit a whole half round trip from the midpoint
			// on a clock running at the store's rate: allow that sliver.
			require.InDelta(t, tc.rate, r.Rate, r.RateBound+1e-6, "the true rate lies within the bound")
			truth := tc.offset + time.Duration(float64(ps[len(ps)-1].At)*tc.rate)
			require.InDelta(t, truth, r.Offset, float64(r.OffsetBound+time.Duration(math.Abs(float64(r.Span)*tc.rate))+time.Microsecond))
			require.NoError(t, r.CheckWriteBehind(runs))
		})
	}
}

func TestTooFewProbes(t *testing.T) {
	t.Parallel()
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		r := doctor.Analyze(nil, runs)
		require.False(t, r.RateKnown)
		require.ErrorIs(t, r.CheckWriteBehind(runs), doctor.ErrTooFewProbes)
		require.Equal(t, "probes:     0 over 0s, store clock against the app's monotonic clock\n", r.String())
	})
	t.Run("one", func(t *testing.T) {
		t.Parallel()
		f := &fakeStore{clk: clock.NewFake(epoch), offset: time.Second}
		r := doctor.Analyze(sample(t, f, 1, every), runs)
		require.False(t, r.RateKnown)
		require.Equal(t, time.Second, r.Offset)
		err := r.CheckWriteBehind(runs)
		require.ErrorIs(t, err, doctor.ErrTooFewProbes)
		require.False(t, errors.Is(err, doctor.ErrClockUnsafe))
		require.Contains(t, r.String(), "rate error: unknown")
	})
	t.Run("two cannot tell a step from a rate, and refuse it as a rate", func(t *testing.T) {
		t.Parallel()
		f := &fakeStore{clk: clock.NewFake(epoch), steps: []fakeStep{{at: 500 * time.Millisecond, size: 20 * time.Second}}}
		r := doctor.Analyze(sample(t, f, 2, every), runs)
		require.Empty(t, r.Steps)
		var se *doctor.SkewError
		require.ErrorAs(t, r.CheckWriteBehind(runs), &se)
		require.True(t, se.DriftOver)
	})
}

// TestCoarseSampleIsRefused: two probes 10ms apart with 8ms round trips
// cannot bound the rate to within S over a term; the doctor says so rather
// than vouching for a clock it could not see.
func TestCoarseSampleIsRefused(t *testing.T) {
	t.Parallel()
	f := &fakeStore{clk: clock.NewFake(epoch), rtts: []time.Duration{8 * time.Millisecond}}
	r := doctor.Analyze(sample(t, f, 2, 10*time.Millisecond), runs)
	require.InDelta(t, 0, r.Rate, 1e-9)
	require.Greater(t, r.DriftBound, runs.Skew)
	require.ErrorIs(t, r.CheckWriteBehind(runs), doctor.ErrClockUnsafe)
}

func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}
