package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRateRingEdges: the throughput ring from a clock at the Unix epoch
// (bucket 0, and negative bucket numbers in the window before it), a
// clock stepped back (counted into the newest bucket, never lost), and a
// gap longer than the ring (everything cleared).
func TestRateRingEdges(t *testing.T) {
	t.Parallel()
	var r rateRing
	at := func(s int64) time.Time { return time.Unix(s, 0) }
	add := func(s int64) { r.add(at(s), func(c *rateCounts) { c.Claimed++ }) }
	claimed := func(ss []rateSample) (out []int64) {
		for _, s := range ss {
			out = append(out, s.Claimed)
		}
		return out
	}

	add(0)
	add(5)
	add(10)
	ss := r.series(at(10))
	require.Len(t, ss, rateBuckets)
	got := claimed(ss)
	require.Equal(t, []int64{2, 1}, got[rateBuckets-2:], "bucket 0 holds two, bucket 1 one")
	require.Equal(t, time.Unix(10, 0).UTC().Format(time.RFC3339Nano), ss[rateBuckets-1].At)

	add(3) // the clock stepped back into bucket 0: counted into the newest
	require.Equal(t, []int64{2, 2}, claimed(r.series(at(10)))[rateBuckets-2:])

	add(10 + 10*rateBuckets - 10) // the newest bucket is still in the window
	got = claimed(r.series(at(10 + 10*rateBuckets - 10)))
	require.Equal(t, int64(2), got[0], "bucket 1, the oldest kept")
	require.Equal(t, int64(1), got[rateBuckets-1])

	add(10_000) // a gap longer than the ring: nothing old survives
	got = claimed(r.series(at(10_000)))
	require.Equal(t, int64(1), got[rateBuckets-1])
	var sum int64
	for _, n := range got {
		sum += n
	}
	require.Equal(t, int64(1), sum)
}
