package doctor_test

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/doctor"
	"github.com/leasehold/leasehold/lease"
)

// fuzzProbes decodes a probe list. Raw: 24 bytes a probe, At, RTT and Offset
// as arbitrary int64s. Otherwise shaped like Sample's output: per 8 bytes a
// wait after the previous probe's answer (0..6.5s in 100µs), an RTT (0..655ms in
// 10µs) and an offset of base ± 35 minutes in µs; with exact set, every
// offset is base and every RTT 0 — a perfect store clock.
func fuzzProbes(data []byte, raw, exact bool, base int64) []doctor.Probe {
	var ps []doctor.Probe
	if raw {
		for i := 0; len(data) >= 24 && i < 64; i++ {
			at, rtt, off := binary.BigEndian.Uint64(data), binary.BigEndian.Uint64(data[8:]), binary.BigEndian.Uint64(data[16:])
			ps = append(ps, doctor.Probe{Index: i, At: time.Duration(at), RTT: time.Duration(rtt), Offset: time.Duration(off)})
			data = data[24:]
		}
		return ps
	}
	const century = int64(100 * 365 * 24 * time.Hour)
	base %= century
	var start, prevRTT time.Duration // the probe's send, on the app's clock
	for i := 0; len(data) >= 8 && i < 64; i++ {
		gap := time.Duration(binary.BigEndian.Uint16(data)) * 100 * time.Microsecond
		rtt := time.Duration(binary.BigEndian.Uint16(data[2:])) * 10 * time.Microsecond
		off := time.Duration(base) + time.Duration(int32(binary.BigEndian.Uint32(data[4:])))*time.Microsecond
		if exact {
			rtt, off = 0, time.Duration(base)
		}
		if i > 0 {
			start += prevRTT + gap // the previous probe's answer, then the wait
		}
		prevRTT = rtt
		ps = append(ps, doctor.Probe{Index: i, At: start + rtt/2, RTT: rtt, Offset: off})
		data = data[8:]
	}
	return ps
}

// FuzzAnalyze: Analyze takes any probe list without panicking, and its
// report — and CheckWriteBehind's verdict on it, and both rendered for an
// operator — never holds a NaN or an infinity. The verdict is nil, a
// *SkewError (ErrClockUnsafe) or ErrTooFewProbes, the last exactly when no
// rate is known. Steps name probes of the sample, in order. For a sample
// Sample could have taken, the figures are also ordered as their names say
// (RTT min <= median <= max, bounds >= 0, the offset among the probes'),
// and a perfect store clock reads as offset base, rate 0, no steps, safe.
func FuzzAnalyze(f *testing.F) {
	probe := func(gapHundredUS, rttTenUS uint16, offUS int32) []byte {
		b := binary.BigEndian.AppendUint16(nil, gapHundredUS)
		b = binary.BigEndian.AppendUint16(b, rttTenUS)
		return binary.BigEndian.AppendUint32(b, uint32(offUS))
	}
	var steady, stepped, fast []byte
	for i := range 20 {
		steady = append(steady, probe(10000, 100, 0)...)
		stepped = append(stepped, probe(10000, 100, int32(min(i/10, 1))*20_000_000)...)
		fast = append(fast, probe(10000, 100, int32(i)*10_000)...)
	}
	f.Add(steady, false, false, int64(3*time.Hour))
	f.Add(stepped, false, false, int64(0))
	f.Add(fast, false, false, int64(-time.Hour))
	f.Add(steady, false, true, int64(time.Minute))
	f.Add(probe(0, 0, 0), false, false, int64(0))
	f.Add([]byte{}, false, false, int64(0))
	raw := func(vals ...int64) []byte {
		var b []byte
		for _, v := range vals {
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		}
		return b
	}
	f.Add(raw(0, 0, math.MinInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, 1, -1, 0), true, false, int64(0))
	f.Add(raw(math.MinInt64, 1, 0, math.MaxInt64, 1, 0), true, false, int64(0))
	f.Fuzz(func(t *testing.T, data []byte, isRaw, exact bool, base int64) {
		ps := fuzzProbes(data, isRaw, exact, base)
		for _, tm := range []lease.Timing{lease.RunDefaults(), lease.WorldDefaults()} {
			r := doctor.Analyze(ps, tm)
			require.Equal(t, len(ps), r.Probes)
			for _, v := range []float64{r.Rate, r.RateBound, r.RatePPM(), r.RateBoundPPM()} {
				require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "report holds %v: %+v", v, r)
			}
			s := r.String()
			require.NotContains(t, s, "NaN")
			require.NotContains(t, s, "Inf")
			last := -1
			for _, st := range r.Steps {
				require.Greater(t, st.Probe, last, "steps out of order")
				require.Less(t, st.Probe, len(ps))
				last = st.Probe
			}

			err := r.CheckWriteBehind(tm)
			var se *doctor.SkewError
			switch {
			case err == nil:
			case errors.As(err, &se):
				require.ErrorIs(t, err, doctor.ErrClockUnsafe)
				require.NotContains(t, err.Error(), "NaN")
			default:
				require.ErrorIs(t, err, doctor.ErrTooFewProbes)
			}
			require.Equal(t, !r.RateKnown, errors.Is(err, doctor.ErrTooFewProbes))

			if isRaw || len(ps) == 0 {
				continue
			}
			require.GreaterOrEqual(t, r.Span, time.Duration(0))
			require.True(t, r.RTTMin <= r.RTTMedian && r.RTTMedian <= r.RTTMax, "RTT min %v median %v max %v", r.RTTMin, r.RTTMedian, r.RTTMax)
			require.GreaterOrEqual(t, r.OffsetBound, time.Duration(0))
			require.GreaterOrEqual(t, r.RateBound, 0.0)
			require.GreaterOrEqual(t, r.DriftBound, time.Duration(0))
			lo, hi := ps[0].Offset, ps[0].Offset
			for _, p := range ps {
				lo, hi = min(lo, p.Offset), max(hi, p.Offset)
			}
			require.True(t, lo <= r.Offset && r.Offset <= hi, "offset %v outside the probes' %v..%v", r.Offset, lo, hi)
			if exact {
				require.Equal(t, time.Duration(base%int64(100*365*24*time.Hour)), r.Offset)
				require.Empty(t, r.Steps)
				require.Zero(t, r.Rate)
				if r.RateKnown {
					require.NoError(t, err, "a perfect store clock is refused")
				}
				require.False(t, strings.Contains(s, "store fast") || strings.Contains(s, "store slow"))
			}
		}
	})
}
