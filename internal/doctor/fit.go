package doctor

import (
	"math"
	"slices"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// StepTolerance is added to the measurement bounds before a jump between two
// probes counts as a step. The bounds themselves are strict (the store read
// its clock inside the round trip), so this only has to cover the store's
// timestamp resolution (Postgres: 1µs) and float rounding in the fit; a step
// worth reporting is orders of magnitude larger.
const StepTolerance = time.Millisecond

// fit is the offset's rate error fitted by least squares over segments of
// probes, with one intercept per segment and one slope for all: the model is
// "the store clock runs at one rate, and jumps at the cuts".
type fit struct {
	// known: some segment has two probes at different times, so there is a
	// slope to speak of.
	known bool
	// rate is the slope of offset over app time: store seconds gained per
	// app second (+0.001 = 1000 ppm fast).
	rate float64
	// bound is the worst case of |rate - true rate| when every probe's
	// offset may be off by up to its Bound in either direction.
	bound float64
}

// segments calls fn with the half-open probe ranges [lo, hi) between cuts;
// cuts are sorted indexes of the first probe after each step.
func segments(n int, cuts []int, fn func(lo, hi int)) {
	lo := 0
	for _, c := range cuts {
		fn(lo, c)
		lo = c
	}
	fn(lo, n)
}

// fitRate fits the pooled within-segment least-squares slope. Times and
// offsets are taken relative to each segment's first probe, in integer
// nanoseconds, before they become floats: a +3h offset must not cost the
// microseconds the fit is about.
func fitRate(ps []Probe, cuts []int) fit {
	var sxx, sxy float64
	segments(len(ps), cuts, func(lo, hi int) {
		if hi-lo < 2 {
			return
		}
		xm, ym := segmentMeans(ps[lo:hi])
		for _, p := range ps[lo:hi] {
			dx := seconds(p.At-ps[lo].At) - xm
			sxx += dx * dx
			sxy += dx * (seconds(p.Offset-ps[lo].Offset) - ym)
		}
	})
	if sxx == 0 {
		return fit{}
	}
	// The slope is Σ dx·y / Sxx, linear in each y; moving every y by up to
	// its bound against the sign of dx moves the slope by at most
	// Σ |dx|·b / Sxx. That is a strict bound, not a standard error: the
	// step test below relies on it to never call jitter a step.
	var wobble float64
	segments(len(ps), cuts, func(lo, hi int) {
		if hi-lo < 2 {
			return
		}
		xm, _ := segmentMeans(ps[lo:hi])
		for _, p := range ps[lo:hi] {
			wobble += math.Abs(seconds(p.At-ps[lo].At)-xm) * seconds(p.Bound())
		}
	})
	return fit{known: true, rate: sxy / sxx, bound: wobble / sxx}
}

// segmentMeans returns the mean time and offset of a segment, relative to
// its first probe, in seconds.
func segmentMeans(seg []Probe) (xm, ym float64) {
	for _, p := range seg {
		xm += seconds(p.At - seg[0].At)
		ym += seconds(p.Offset - seg[0].Offset)
	}
	n := float64(len(seg))
	return xm / n, ym / n
}

// jump is the change of offset from probe i-1 to probe i beyond what the
// fitted rate explains, and the bound it must exceed to be a step (without
// StepTolerance): both probes' bounds, plus what the rate's own uncertainty
// allows over the gap. The probes' bounds are scaled by 1+|rate|: half a
// round trip on the app's clock is that much on a store clock running at
// another rate.
func jump(ps []Probe, i int, f fit) (size, bound time.Duration) {
	gap := seconds(ps[i].At - ps[i-1].At)
	size = lease.SubSat(lease.SubSat(ps[i].Offset, ps[i-1].Offset), duration(f.rate*gap))
	probes := seconds(ps[i-1].Bound()+ps[i].Bound()) * (1 + math.Abs(f.rate))
	bound = duration(probes + f.bound*gap)
	return size, bound
}

// findSteps cuts the probes at steps, largest first, refitting the rate after
// each cut, until no jump exceeds its bound plus StepTolerance.
//
// Greedy, because both failure modes of a one-shot test are real: a rate
// fitted across a large step is skewed enough to make every other gap look
// like a step, and a step test that ignores the rate calls a fast clock a
// staircase. Taking only the largest jump each round and refitting cures
// both. Before any cut the rate's bound is strict, so a jump made only of
// jitter within the probes' bounds never exceeds its threshold and never
// makes a cut (TestJitterMakesNoSteps); a real step is at least StepTolerance
// beyond everything the bounds allow.
func findSteps(ps []Probe) ([]int, fit) {
	var cuts []int
	f := fitRate(ps, cuts)
	for f.known {
		best, bestSize := -1, time.Duration(0)
		for i := 1; i < len(ps); i++ {
			if slices.Contains(cuts, i) {
				continue
			}
			size, bound := jump(ps, i, f)
			if a := abs(size); a > lease.AddSat(bound, StepTolerance) && a > bestSize {
				best, bestSize = i, a
			}
		}
		if best < 0 {
			break
		}
		trial := append(slices.Clone(cuts), best)
		slices.Sort(trial)
		tf := fitRate(ps, trial)
		if !tf.known {
			// Cutting here would leave no two probes to measure a rate
			// with (two probes, one jump): the jump stays in the rate,
			// where the check still counts it against S.
			break
		}
		cuts, f = trial, tf
	}
	return cuts, f
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// duration converts seconds to a Duration, saturating: an absurd rate times
// a long term must clamp, not wrap.
func duration(s float64) time.Duration {
	ns := s * float64(time.Second)
	switch {
	case math.IsNaN(ns):
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	case ns <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(math.Round(ns))
}

// abs returns |d|, saturating at MaxInt64 for MinInt64.
func abs(d time.Duration) time.Duration {
	if d >= 0 {
		return d
	}
	if d == math.MinInt64 {
		return math.MaxInt64
	}
	return -d
}
