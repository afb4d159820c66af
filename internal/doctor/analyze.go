package doctor

import (
	"cmp"
	"slices"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// Step is a jump of the store clock between two consecutive probes that
// neither the fitted rate nor the probes' bounds explain.
type Step struct {
	// Probe is the index of the first probe after the jump.
	Probe int
	// At is that probe's time on the app's monotonic clock, from the start
	// of sampling.
	At time.Duration
	// Size is the jump beyond what the rate explains: positive when the
	// store clock jumped forward.
	Size time.Duration
	// Bound is how far Size may be from the true jump: both probes' RTT/2
	// plus the rate's uncertainty over the gap.
	Bound time.Duration
}

// worst is the largest the step may truly have been.
func (s Step) worst() time.Duration { return lease.AddSat(abs(s.Size), s.Bound) }

// Report is what a sample shows about the store clock. Per SPEC §1 its
// Offset is for the operator only: nothing in leasehold uses it.
type Report struct {
	// Probes is how many probes the report is made of.
	Probes int
	// Span is the app time from the first probe's midpoint to the last's.
	Span time.Duration

	// Offset is store minus app time (positive: the store is ahead): the
	// median of the lowest-RTT third of the probes since the last step,
	// which a slow round trip or an old step cannot drag. The true offset is
	// within ±OffsetBound of it (ignoring rate error across the span).
	Offset, OffsetBound time.Duration

	// RateKnown is false when the sample cannot measure a rate (fewer
	// than two probes, or none at distinct times between steps); Rate,
	// RateBound, Drift and DriftBound are then zero.
	RateKnown bool
	// Rate is the store clock's rate error: store seconds gained per app
	// second (+0.001 is 1000 ppm fast), within ±RateBound.
	Rate, RateBound float64

	// Term and Skew are T_lease and S of the timing Analyze was given.
	Term, Skew time.Duration
	// Drift is Rate × Term, the error the rate alone builds up over one
	// lease term, within ±DriftBound.
	Drift, DriftBound time.Duration

	// Steps are the jumps found, in probe order.
	Steps []Step

	// RTTMin, RTTMedian and RTTMax describe the store call's round trip:
	// the store's latency as the app sees it.
	RTTMin, RTTMedian, RTTMax time.Duration
}

// RatePPM is Rate in parts per million.
func (r Report) RatePPM() float64 { return r.Rate * 1e6 }

// RateBoundPPM is RateBound in parts per million.
func (r Report) RateBoundPPM() float64 { return r.RateBound * 1e6 }

// Analyze turns probes (in the order Sample returned them) into a report,
// judging drift over t.Lease. It is a pure function; t should be a validated
// timing (lease.RunDefaults() or lease.WorldDefaults() filled in).
func Analyze(probes []Probe, t lease.Timing) Report {
	r := Report{Probes: len(probes), Term: t.Lease, Skew: t.Skew}
	if len(probes) == 0 {
		return r
	}
	r.Span = probes[len(probes)-1].At - probes[0].At

	cuts, f := findSteps(probes)
	if f.known {
		r.RateKnown, r.Rate, r.RateBound = true, f.rate, f.bound
		r.Drift, r.DriftBound = driftOver(f.rate, f.bound, t.Lease)
	}
	for _, c := range cuts {
		size, bound := jump(probes, c, f)
		r.Steps = append(r.Steps, Step{Probe: probes[c].Index, At: probes[c].At, Size: size, Bound: bound})
	}

	since := 0
	if len(cuts) > 0 {
		since = cuts[len(cuts)-1]
	}
	r.Offset, r.OffsetBound = offsetOf(probes[since:])

	rtts := make([]time.Duration, len(probes))
	for i, p := range probes {
		rtts[i] = p.RTT
	}
	slices.Sort(rtts)
	r.RTTMin, r.RTTMedian, r.RTTMax = rtts[0], median(rtts), rtts[len(rtts)-1]
	return r
}

// driftOver scales a rate and its bound to a term.
func driftOver(rate, bound float64, term time.Duration) (time.Duration, time.Duration) {
	return duration(rate * seconds(term)), duration(bound * seconds(term))
}

// offsetOf estimates the offset from the lowest-RTT third of ps (at least
// one probe): the median of their offsets, whose error is at most the
// largest of their bounds, since every one of them brackets the truth.
func offsetOf(ps []Probe) (offset, bound time.Duration) {
	byRTT := slices.Clone(ps)
	slices.SortStableFunc(byRTT, func(a, b Probe) int { return cmp.Compare(a.RTT, b.RTT) })
	best := byRTT[:max(1, (len(byRTT)+2)/3)]
	offs := make([]time.Duration, len(best))
	for i, p := range best {
		offs[i] = p.Offset
		bound = max(bound, p.Bound())
	}
	slices.Sort(offs)
	return median(offs), bound
}

// median of a sorted, non-empty slice; the mean of the middle two for an
// even length.
func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	a, b := sorted[n/2-1], sorted[n/2]
	return a + (b-a)/2 // no a+b: it could overflow
}
