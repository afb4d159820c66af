package doctor

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// String renders the report for an operator, one figure per line, e.g.
//
//	probes:     20 over 9.5s, store clock against the app's monotonic clock
//	offset:     +3h0m0.000412s ± 212µs (store ahead; reported only, never used)
//	rate error: +1000.0 ppm ± 12.1 ppm (store fast): drift +90ms ± 1.1ms over T_lease 1m30s, S 15s
//	steps:      none beyond the probes' bounds + 1ms
//	store RTT:  min 412µs, median 530µs, max 2.1ms
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "probes:     %d over %s, store clock against the app's monotonic clock\n", r.Probes, human(r.Span))
	if r.Probes == 0 {
		return b.String()
	}
	since := ""
	if len(r.Steps) > 0 {
		since = ", since the last step"
	}
	fmt.Fprintf(&b, "offset:     %s ± %s (%s%s; reported only, never used)\n",
		signed(r.Offset), human(r.OffsetBound), ahead(r.Offset), since)
	if r.RateKnown {
		fmt.Fprintf(&b, "rate error: %s ppm ± %s ppm (%s): drift %s ± %s over T_lease %s, S %s\n",
			ppm(r.Rate), strconv.FormatFloat(r.RateBoundPPM(), 'f', 1, 64), fast(r.Rate),
			signed(r.Drift), human(r.DriftBound), r.Term, r.Skew)
	} else {
		fmt.Fprintf(&b, "rate error: unknown (needs at least 2 probes at distinct times)\n")
	}
	if len(r.Steps) == 0 {
		fmt.Fprintf(&b, "steps:      none beyond the probes' bounds + %s\n", StepTolerance)
	}
	for i, s := range r.Steps {
		label := "steps:     "
		if i > 0 {
			label = "           "
		}
		fmt.Fprintf(&b, "%s %s ± %s at probe %d (%s into the sample)\n", label, signed(s.Size), human(s.Bound), s.Probe, human(s.At))
	}
	fmt.Fprintf(&b, "store RTT:  min %s, median %s, max %s\n", human(r.RTTMin), human(r.RTTMedian), human(r.RTTMax))
	return b.String()
}

func ahead(d time.Duration) string {
	switch {
	case d > 0:
		return "store ahead"
	case d < 0:
		return "store behind"
	}
	return "in step"
}

func fast(rate float64) string {
	switch {
	case rate > 0:
		return "store fast"
	case rate < 0:
		return "store slow"
	}
	return "same rate"
}

// ppm renders a rate as signed parts per million with one decimal.
func ppm(rate float64) string {
	s := strconv.FormatFloat(rate*1e6, 'f', 1, 64)
	if rate >= 0 {
		return "+" + s
	}
	return s
}

// signed renders d with an explicit sign, so "+20s" reads as a direction.
func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + human(d)
	}
	return "-" + human(abs(d))
}

// human rounds d to about four significant figures: nanoseconds of a 3h
// offset are noise next to its bound.
func human(d time.Duration) string {
	a := abs(d)
	switch {
	case a >= time.Second:
		return d.Round(time.Millisecond).String()
	case a >= time.Millisecond:
		return d.Round(time.Microsecond).String()
	case a >= time.Microsecond:
		return d.Round(100 * time.Nanosecond).String()
	}
	return d.String()
}
