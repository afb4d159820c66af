package lease_test

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

// FuzzSaturating checks the saturating helpers against exact big-integer
// arithmetic clamped to the Duration range, and that Until and Runway never
// go negative and never grow as now advances. Run it with
// go test -fuzz=FuzzSaturating ./lease.
func FuzzSaturating(f *testing.F) {
	seeds := [][3]int64{
		{0, 0, 0},
		{math.MaxInt64, 1, 2},
		{math.MinInt64, -1, -1},
		{math.MinInt64, math.MinInt64, math.MinInt64},
		{math.MaxInt64, math.MinInt64, -1},
		{-1, math.MinInt64, math.MaxInt64},
		{int64(time.Second), int64(time.Minute), 3},
		{int64(90 * time.Second), int64(15 * time.Second), int64(time.Hour)},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, n int64) {
		da, db := time.Duration(a), time.Duration(b)
		bigA, bigB, bigN := big.NewInt(a), big.NewInt(b), big.NewInt(n)

		require.Equal(t, clampBig(new(big.Int).Add(bigA, bigB)), lease.AddSat(da, db))
		require.Equal(t, clampBig(new(big.Int).Sub(bigA, bigB)), lease.SubSat(da, db))
		require.Equal(t, clampBig(new(big.Int).Mul(bigA, bigN)), lease.MulSat(da, n))
		require.Equal(t, lease.AddSat(da, db), lease.AddSat(db, da))
		if b < math.MaxInt64 {
			require.LessOrEqual(t, lease.AddSat(da, db), lease.AddSat(da, db+1))
			require.GreaterOrEqual(t, lease.SubSat(da, db), lease.SubSat(da, db+1))
		}

		// Times within ±292 years of 1970; later is now advanced by |n|.
		deadline := time.Unix(0, a)
		now := time.Unix(0, b)
		later := lease.AddTime(now, time.Duration(n).Abs())
		require.False(t, later.Before(now))

		u, uLater := lease.Until(deadline, now), lease.Until(deadline, later)
		require.GreaterOrEqual(t, u, time.Duration(0))
		require.LessOrEqual(t, uLater, u)

		tm := lease.Timing{Lease: da, Skew: time.Duration(n)}
		r, rLater := lease.Runway(now, now, tm), lease.Runway(now, later, tm)
		require.GreaterOrEqual(t, rLater, time.Duration(0))
		require.LessOrEqual(t, rLater, r)
	})
}

// clampBig returns x clamped to the range of time.Duration.
func clampBig(x *big.Int) time.Duration {
	switch {
	case x.Cmp(big.NewInt(math.MaxInt64)) > 0:
		return math.MaxInt64
	case x.Cmp(big.NewInt(math.MinInt64)) < 0:
		return math.MinInt64
	}
	return time.Duration(x.Int64())
}
