package lease_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/lease"
)

// FuzzTiming checks Validate against SPEC §1 stated here: a timing is
// accepted exactly when every field is in [1ms, 24h], D_stop + S < T_lease
// and T_renew + T_drain < D_stop. A refusal matches ErrInvalidTiming and is
// made of *TimingErrors, one per out-of-range field, or else one per broken
// relation. WithDefaults fills exactly the zero fields. For an accepted
// timing, CheckEffect admits exactly the durations in (0, MaxEffect], and
// every duration it admits passes the gate of a holder whose lease was just
// confirmed, so no declared effect is one the gate could never run; the
// runway of a fresh lease is T_lease - S, falling to 0 a term later.
func FuzzTiming(f *testing.F) {
	add := func(t lease.Timing, maxDur time.Duration) {
		f.Add(int64(t.Lease), int64(t.Renew), int64(t.Drain), int64(t.Stop), int64(t.Skew), int64(t.Poll), int64(t.Margin), int64(maxDur), int64(0))
	}
	add(lease.RunDefaults(), 40*time.Second)
	add(lease.WorldDefaults(), 14*time.Second)
	add(lease.Timing{}, 0)
	add(lease.Timing{Lease: 60 * time.Second, Renew: 15 * time.Second, Drain: 5 * time.Second, Stop: 45 * time.Second, Skew: 15 * time.Second, Poll: 1, Margin: 1}, time.Second)
	add(lease.Timing{Lease: 24 * time.Hour, Renew: 1, Drain: 1, Stop: 3, Skew: 24*time.Hour - 4, Poll: 24 * time.Hour, Margin: 3}, 1)
	add(lease.Timing{Lease: -1, Renew: math.MinInt64, Drain: math.MaxInt64, Stop: 24*time.Hour + 1, Skew: 1, Poll: 1, Margin: 1}, -1)
	add(lease.Timing{Lease: 90 * time.Second, Renew: 30 * time.Second, Drain: 15 * time.Second, Stop: 45 * time.Second, Skew: 45 * time.Second, Poll: 1, Margin: 1}, 1)
	f.Fuzz(func(t *testing.T, tl, tr, td, ds, s, p, m, maxDur, sendNS int64) {
		tm := lease.Timing{Lease: time.Duration(tl), Renew: time.Duration(tr), Drain: time.Duration(td),
			Stop: time.Duration(ds), Skew: time.Duration(s), Poll: time.Duration(p), Margin: time.Duration(m)}

		const day = int64(24 * time.Hour)
		var outOfRange int
		for _, v := range []int64{tl, tr, td, ds, s, p, m} {
			if v < int64(time.Millisecond) || v > day {
				outOfRange++
			}
		}
		var broken int
		if outOfRange == 0 { // all in [1ms, 24h]: the sums cannot overflow
			if ds+s >= tl {
				broken++
			}
			if tr+td >= ds {
				broken++
			}
		}
		err := tm.Validate()
		want := outOfRange + broken
		if want == 0 {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, lease.ErrInvalidTiming)
			leaves := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				leaves = j.Unwrap()
			}
			require.Len(t, leaves, want, "%v", err)
			for _, l := range leaves {
				var te *lease.TimingError
				require.True(t, errors.As(l, &te), "not a *TimingError: %v", l)
				require.NotEmpty(t, te.Field)
			}
		}

		// WithDefaults fills exactly the zero fields.
		d := tm.WithDefaults(lease.RunDefaults())
		for i, pair := range [][2]time.Duration{{tm.Lease, d.Lease}, {tm.Renew, d.Renew}, {tm.Drain, d.Drain},
			{tm.Stop, d.Stop}, {tm.Skew, d.Skew}, {tm.Poll, d.Poll}, {tm.Margin, d.Margin}} {
			if pair[0] != 0 {
				require.Equal(t, pair[0], pair[1], "field %d was set and changed", i)
			} else {
				require.NotZero(t, pair[1], "field %d was left zero", i)
			}
		}

		effErr := tm.CheckEffect(time.Duration(maxDur))
		if effErr != nil {
			require.ErrorIs(t, effErr, lease.ErrEffectDuration)
		}
		if err != nil {
			return
		}

		me := tm.MaxEffect()
		// Validate does not relate the margin to D_stop: with margin >=
		// D_stop no effect can ever pass the gate, and MaxEffect is 0.
		require.Equal(t, tm.Margin < tm.Stop, me > 0, "MaxEffect %v", me)
		require.LessOrEqual(t, me, tm.Lease-tm.Skew-tm.Renew-tm.Drain)
		require.LessOrEqual(t, me, max(tm.Stop-tm.Margin, 0))
		require.Equal(t, maxDur > 0 && time.Duration(maxDur) <= me, effErr == nil, "CheckEffect(%v) = %v, MaxEffect %v", time.Duration(maxDur), effErr, me)
		if effErr == nil {
			require.True(t, keeper.GatePasses(tm, 0, 0, time.Duration(maxDur)),
				"CheckEffect admitted %v, which the gate of a fresh lease refuses", time.Duration(maxDur))
		}
		if me > 0 {
			require.True(t, keeper.GatePasses(tm, 0, 0, me))
		}

		send := time.Unix(0, sendNS)
		require.Equal(t, tm.Lease-tm.Skew, lease.Runway(send, send, tm))
		require.Zero(t, lease.Runway(send, lease.AddTime(send, tm.Lease-tm.Skew), tm))
		require.Zero(t, lease.Runway(time.Time{}, send, tm), "no runway before a confirmed write")
	})
}
