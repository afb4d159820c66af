package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/doctor"
	"github.com/leasehold/leasehold/journal"
)

// Limits of GET /v1/stats/clock: a sample takes at most about
// maxDoctorSamples × maxDoctorEvery, and one store-clock read per probe.
const (
	defaultDoctorSamples = 10
	maxDoctorSamples     = 50
	defaultDoctorEvery   = 100 * time.Millisecond
	maxDoctorEvery       = time.Second
)

// clockDoctor is GET /v1/stats/clock?samples=&every_ms=: `leasehold
// doctor` run by the server now — the store's clock sampled against this
// process's monotonic clock (samples probes every_ms apart) and analysed:
// offset, rate, steps, round trips, and the write-behind verdict for the
// server's timing. Unlike GET /v1/stats/health it costs the store one
// clock read per probe, so the health page asks for it once per view and
// on a button, never on its poll. It measures against the real clock even
// when the server runs on another (a test's fake one): the store's clock
// is a real one, and so is the time between probes.
func (s *Server) clockDoctor(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var samples, everyMS int64
	err := allow(r, auth.Read, auth.Queue, "")
	if err == nil {
		err = queryInt(q.Get("samples"), "samples", &samples)
	}
	if err == nil {
		err = queryInt(q.Get("every_ms"), "every_ms", &everyMS)
	}
	samples = cmpOr(samples, defaultDoctorSamples)
	every := time.Duration(everyMS) * time.Millisecond
	if everyMS == 0 && q.Get("every_ms") == "" {
		every = defaultDoctorEvery
	}
	if err == nil && (samples < 2 || samples > maxDoctorSamples) {
		err = &journal.InputError{Field: "samples", Problem: "samples is 2 to " + strconv.Itoa(maxDoctorSamples) + " (a rate needs two probes)"}
	}
	if err == nil && (every < 0 || every > maxDoctorEvery) {
		err = &journal.InputError{Field: "every_ms", Problem: "every_ms is 0 to " + strconv.FormatInt(maxDoctorEvery.Milliseconds(), 10)}
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	probes, err := doctor.Sample(r.Context(), s.d, clock.Real(), int(samples), every)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	t := s.cfg.Timing
	rep := doctor.Analyze(probes, t)
	out := doctorResponse{Store: s.d.Name(), Samples: rep.Probes, SpanMS: fms(rep.Span), OffsetMS: fms(rep.Offset), OffsetBoundMS: fms(rep.OffsetBound),
		RateKnown: rep.RateKnown, RatePPM: rep.RatePPM(), RateBoundPPM: rep.RateBoundPPM(), DriftMS: fms(rep.Drift), DriftBoundMS: fms(rep.DriftBound),
		Steps: []doctorStep{}, RTTMinMS: fms(rep.RTTMin), RTTMedianMS: fms(rep.RTTMedian), RTTMaxMS: fms(rep.RTTMax),
		LeaseMS: ms(t.Lease), SkewMS: ms(t.Skew), WriteBehind: "ok"}
	for _, st := range rep.Steps {
		out.Steps = append(out.Steps, doctorStep{Probe: st.Probe, AtMS: fms(st.At), SizeMS: fms(st.Size), BoundMS: fms(st.Bound)})
	}
	if err := rep.CheckWriteBehind(t); err != nil {
		out.WriteBehind, out.Refusal = "refused", err.Error()
	}
	writeJSON(w, out)
}

// doctorResponse is GET /v1/stats/clock: internal/doctor's Report, in
// milliseconds (fractions kept: a loopback round trip is well under one).
type doctorResponse struct {
	Store         string       `json:"store"`
	Samples       int          `json:"samples"`
	SpanMS        float64      `json:"span_ms"`
	OffsetMS      float64      `json:"offset_ms"` // store clock − this process's, best round trips
	OffsetBoundMS float64      `json:"offset_bound_ms"`
	RateKnown     bool         `json:"rate_known"`
	RatePPM       float64      `json:"rate_ppm"` // how fast the store clock runs against the monotonic one
	RateBoundPPM  float64      `json:"rate_bound_ppm"`
	DriftMS       float64      `json:"drift_ms"` // the rate over one T_lease
	DriftBoundMS  float64      `json:"drift_bound_ms"`
	Steps         []doctorStep `json:"steps"`
	RTTMinMS      float64      `json:"rtt_min_ms"`
	RTTMedianMS   float64      `json:"rtt_median_ms"`
	RTTMaxMS      float64      `json:"rtt_max_ms"`
	LeaseMS       int64        `json:"lease_ms"`
	SkewMS        int64        `json:"skew_ms"`
	WriteBehind   string       `json:"write_behind"`      // "ok" or "refused"
	Refusal       string       `json:"refusal,omitempty"` // why, when refused
}

type doctorStep struct {
	Probe   int     `json:"probe"`
	AtMS    float64 `json:"at_ms"`
	SizeMS  float64 `json:"size_ms"`
	BoundMS float64 `json:"bound_ms"`
}
