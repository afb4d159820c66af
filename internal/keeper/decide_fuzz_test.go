package keeper_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// FuzzParseMode: exactly "sync", "dark" and "writebehind" parse, each to
// the mode whose String it is; anything else is an *InputError for "mode"
// (lease.ErrInvalid). Every Mode value prints without panicking, and its
// String parses back exactly when it is one of the three modes.
func FuzzParseMode(f *testing.F) {
	for _, s := range []string{"sync", "dark", "writebehind", "", "Sync", "write-behind", "sync ", "Mode(3)", "\x00"} {
		f.Add(s, int32(0))
	}
	f.Add("dark", int32(-1))
	f.Add("dark", int32(math.MaxInt32))
	f.Fuzz(func(t *testing.T, s string, n int32) {
		m, err := keeper.ParseMode(s)
		if s == "sync" || s == "dark" || s == "writebehind" {
			require.NoError(t, err)
			require.Equal(t, s, m.String())
		} else {
			var ie *journal.InputError
			require.True(t, errors.As(err, &ie), "%q: %v", s, err)
			require.Equal(t, "mode", ie.Field)
			require.ErrorIs(t, err, lease.ErrInvalid)
		}

		mode := keeper.Mode(n)
		back, err := keeper.ParseMode(mode.String())
		if n >= 0 && n <= 2 {
			require.NoError(t, err)
			require.Equal(t, mode, back)
		} else {
			require.Error(t, err, "Mode(%d) prints as %q, which parses", n, mode.String())
		}
	})
}

// FuzzDecide: the keeper's pure decisions, for any timing and any two
// clock readings now <= later, never go negative and move one way as time
// passes: lag grows, runway and the gate's available time shrink, a holder
// that must stop still must later, and a gate that refuses still refuses
// later and for a longer effect. Available never exceeds runway. For a
// valid timing also: the gate never passes a holder that must stop itself,
// and a holder with no runway left has already had to stop.
func FuzzDecide(f *testing.F) {
	add := func(t lease.Timing, sent, now, dt, maxDur, more time.Duration) {
		f.Add(int64(t.Lease), int64(t.Renew), int64(t.Drain), int64(t.Stop), int64(t.Skew), int64(t.Poll), int64(t.Margin),
			int64(sent), int64(now), int64(dt), int64(maxDur), int64(more))
	}
	run := lease.RunDefaults()
	add(run, 0, 0, time.Second, 40*time.Second, time.Second)
	add(run, 10*time.Second, 30*time.Second, 25*time.Second, 10*time.Second, 0)
	add(run, 0, 45*time.Second-1, 1, 0, 1)
	add(lease.WorldDefaults(), math.MinInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64)
	add(lease.Timing{Lease: -1, Skew: math.MinInt64, Stop: math.MaxInt64, Margin: math.MinInt64}, math.MaxInt64, math.MinInt64, 1, -1, 1)
	f.Fuzz(func(t *testing.T, tl, tr, td, ds, s, p, m, sent, now, dt, maxDur, more int64) {
		tm := lease.Timing{Lease: time.Duration(tl), Renew: time.Duration(tr), Drain: time.Duration(td),
			Stop: time.Duration(ds), Skew: time.Duration(s), Poll: time.Duration(p), Margin: time.Duration(m)}
		snt, n := time.Duration(sent), time.Duration(now)
		later := lease.AddSat(n, time.Duration(dt).Abs()) // Abs saturates MinInt64
		md := time.Duration(maxDur)
		longer := lease.AddSat(md, time.Duration(more).Abs())

		for _, at := range []time.Duration{n, later} {
			require.GreaterOrEqual(t, keeper.Lag(snt, at), time.Duration(0))
			require.GreaterOrEqual(t, keeper.Runway(tm, snt, at), time.Duration(0))
			require.GreaterOrEqual(t, keeper.Available(tm, snt, at), time.Duration(0))
			require.LessOrEqual(t, keeper.Available(tm, snt, at), keeper.Runway(tm, snt, at))
			require.LessOrEqual(t, keeper.Runway(tm, snt, at), max(lease.SubSat(tm.Lease, tm.Skew), 0))
		}
		require.GreaterOrEqual(t, keeper.Lag(snt, later), keeper.Lag(snt, n))
		require.LessOrEqual(t, keeper.Runway(tm, snt, later), keeper.Runway(tm, snt, n))
		require.LessOrEqual(t, keeper.Available(tm, snt, later), keeper.Available(tm, snt, n))
		if keeper.MustStop(tm, snt, n) {
			require.True(t, keeper.MustStop(tm, snt, later), "stop rule undone by time passing")
		}
		if keeper.GatePasses(tm, snt, later, md) {
			require.True(t, keeper.GatePasses(tm, snt, n, md), "gate passes later but not now")
		}
		if keeper.GatePasses(tm, snt, n, longer) {
			require.True(t, keeper.GatePasses(tm, snt, n, md), "gate passes a longer effect but not a shorter one")
		}
		require.GreaterOrEqual(t, keeper.Needed(tm, longer), keeper.Needed(tm, md))

		if tm.Validate() != nil {
			return
		}
		require.GreaterOrEqual(t, keeper.Needed(tm, md), tm.Margin)
		for _, at := range []time.Duration{n, later} {
			if keeper.GatePasses(tm, snt, at, md) {
				require.False(t, keeper.MustStop(tm, snt, at), "the gate passed a holder that must stop")
			}
			if keeper.Runway(tm, snt, at) == 0 {
				require.True(t, keeper.MustStop(tm, snt, at), "no runway left, yet the holder need not stop")
			}
		}
	})
}

// FuzzGateBound: the gate's folded form (GateBound, GatePassesBound, what
// Entry.Gate runs) decides exactly as GatePasses for every valid timing,
// and for it under any store-clock cut, and any two readings and effect
// duration, saturated ones included.
func FuzzGateBound(f *testing.F) {
	run, world := lease.RunDefaults(), lease.WorldDefaults()
	for _, c := range []struct {
		t                 lease.Timing
		sent, now, maxDur time.Duration
	}{
		{run, 0, 0, 0}, {run, 0, 10 * time.Second, 5 * time.Second}, {run, 0, 40 * time.Second, 0},
		{run, 10 * time.Second, 30*time.Second - 1, 10 * time.Second}, {run, 0, 45*time.Second - 1, 1},
		{world, math.MinInt64, math.MaxInt64, math.MaxInt64}, {world, math.MaxInt64, math.MinInt64, math.MinInt64},
		{run, 5, 5, math.MaxInt64 - 1},
	} {
		f.Add(int64(c.t.Lease), int64(c.t.Renew), int64(c.t.Drain), int64(c.t.Stop), int64(c.t.Skew), int64(c.t.Poll), int64(c.t.Margin),
			int64(c.sent), int64(c.now), int64(c.maxDur))
	}
	f.Fuzz(func(t *testing.T, tl, tr, td, ds, s, p, m, sent, now, maxDur int64) {
		tm := lease.Timing{Lease: time.Duration(tl), Renew: time.Duration(tr), Drain: time.Duration(td),
			Stop: time.Duration(ds), Skew: time.Duration(s), Poll: time.Duration(p), Margin: time.Duration(m)}
		if tm.Validate() != nil {
			tm = lease.RunDefaults()
		}
		snt, n, md := time.Duration(sent), time.Duration(now), time.Duration(maxDur)
		require.Equal(t, keeper.GatePasses(tm, snt, n, md), keeper.GatePassesBound(keeper.GateBound(tm), tm.Margin, snt, n, md),
			"timing %+v, sent %d, now %d, maxDur %d", tm, snt, n, md)
		// The timing under a store-clock cut (Keeper.timing): S widened by
		// the cut, D_stop capped at T_lease - S. The cut is taken from the
		// drawn renew field, so the fuzzer moves it too.
		cut := tm
		cut.Skew = lease.AddSat(cut.Skew, time.Duration(tr).Abs())
		cut.Stop = min(cut.Stop, max(lease.SubSat(cut.Lease, cut.Skew), 0))
		require.Equal(t, keeper.GatePasses(cut, snt, n, md), keeper.GatePassesBound(keeper.GateBound(cut), cut.Margin, snt, n, md),
			"cut timing %+v, sent %d, now %d, maxDur %d", cut, snt, n, md)
	})
}
