package doctor

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leasehold/leasehold/lease"
)

var (
	// ErrClockUnsafe is matched (via errors.Is) by every *SkewError: the
	// store clock moved more within one term than the safety margin S
	// allows, so write-behind must not start.
	ErrClockUnsafe = errors.New("store clock unsafe for write-behind")

	// ErrTooFewProbes: the sample cannot measure the store clock's rate
	// (fewer than two probes at distinct times), so it cannot vouch for it.
	ErrTooFewProbes = errors.New("too few probes to measure the store clock")
)

// SkewError is CheckWriteBehind's refusal. Each figure is the measured value
// widened by its bound, compared with S; the message names them all.
type SkewError struct {
	// Term and Skew are T_lease and S judged against.
	Term, Skew time.Duration
	// Rate is the measured rate error (see Report.Rate).
	Rate float64
	// Drift and DriftBound are the rate error over one term and its bound.
	Drift, DriftBound time.Duration
	// DriftOver: |Drift| + DriftBound > S on its own.
	DriftOver bool
	// Steps are the steps each larger than S on its own (|Size| + Bound).
	Steps []Step
	// Together is set when neither the drift nor any step exceeds S alone
	// but the drift and the steps within one term do: it is that sum, and
	// TogetherSteps is the steps' share of it.
	Together, TogetherSteps time.Duration
}

// Error names every figure that breaks S, e.g. "store clock unsafe for
// write-behind: drift +18s ± 7ms over T_lease 1m30s: up to 18.007s > S 15s
// (rate +200000.0 ppm); step of +20s ± 1.1ms at probe 11 (11.012s into the
// sample) > S 15s".
func (e *SkewError) Error() string {
	var parts []string
	if e.DriftOver {
		parts = append(parts, fmt.Sprintf("drift %s ± %s over T_lease %s: up to %s > S %s (rate %s ppm)",
			signed(e.Drift), human(e.DriftBound), e.Term, human(lease.AddSat(abs(e.Drift), e.DriftBound)), e.Skew, ppm(e.Rate)))
	}
	for _, s := range e.Steps {
		parts = append(parts, fmt.Sprintf("step of %s ± %s at probe %d (%s into the sample) > S %s",
			signed(s.Size), human(s.Bound), s.Probe, human(s.At), e.Skew))
	}
	if e.Together > 0 {
		parts = append(parts, fmt.Sprintf("drift %s ± %s over T_lease %s plus steps of %s within one term: %s > S %s",
			signed(e.Drift), human(e.DriftBound), e.Term, human(e.TogetherSteps), human(e.Together), e.Skew))
	}
	return ErrClockUnsafe.Error() + ": " + strings.Join(parts, "; ")
}

// Unwrap makes errors.Is(err, ErrClockUnsafe) true.
func (e *SkewError) Unwrap() error { return ErrClockUnsafe }

// CheckWriteBehind is write-behind start-up's gate: it returns a *SkewError
// (matching ErrClockUnsafe) when the store clock's error within one term of
// t — the drift over t.Lease, any step, or both together — may exceed t.Skew,
// and an error matching ErrTooFewProbes when the report cannot tell.
//
// The offset plays no part (SPEC §1). Figures are taken at their worst
// within their bounds, so a sample too coarse to show the clock is safe is
// refused rather than trusted; and by magnitude, since a clock that has
// stepped or drifted one way is no better bounded the other.
func (r Report) CheckWriteBehind(t lease.Timing) error {
	if !r.RateKnown {
		return fmt.Errorf("doctor: %d probes over %s cannot measure the store clock's rate; need at least 2 at distinct times: %w",
			r.Probes, human(r.Span), ErrTooFewProbes)
	}
	drift, driftBound := driftOver(r.Rate, r.RateBound, t.Lease)
	e := &SkewError{Term: t.Lease, Skew: t.Skew, Rate: r.Rate, Drift: drift, DriftBound: driftBound}
	driftWorst := lease.AddSat(abs(drift), driftBound)
	e.DriftOver = driftWorst > t.Skew
	for _, s := range r.Steps {
		if s.worst() > t.Skew {
			e.Steps = append(e.Steps, s)
		}
	}
	if !e.DriftOver && len(e.Steps) == 0 {
		steps := worstStepsInTerm(r.Steps, t.Lease)
		if together := lease.AddSat(driftWorst, steps); together > t.Skew {
			e.Together, e.TogetherSteps = together, steps
		}
	}
	if !e.DriftOver && len(e.Steps) == 0 && e.Together == 0 {
		return nil
	}
	return e
}

// worstStepsInTerm is the largest sum of steps (each at its worst) that fall
// within one window of length term: S bounds the clock's error within one
// term, and two steps a minute apart add up inside a 90s lease.
func worstStepsInTerm(steps []Step, term time.Duration) time.Duration {
	var worst time.Duration
	for i, first := range steps {
		var sum time.Duration
		for _, s := range steps[i:] {
			if s.At-first.At >= term {
				break
			}
			sum = lease.AddSat(sum, s.worst())
		}
		worst = max(worst, sum)
	}
	return worst
}
