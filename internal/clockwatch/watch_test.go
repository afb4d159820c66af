package clockwatch

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

// timing is the runs' defaults: T_lease 90s, S 15s.
var timing = lease.RunDefaults()

// store is the store's wall clock at a given app time (monotonic offset).
type store func(at time.Duration) time.Time

var epoch = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func steady(offset time.Duration) store {
	return func(at time.Duration) time.Time { return epoch.Add(at + offset) }
}

// probe runs one round trip at app time at with round trip rtt; the store
// reads its clock at a random instant inside it.
func probe(w *Watch, s store, at, rtt time.Duration, r *rand.Rand) Verdict {
	read := at + time.Duration(r.Int64N(int64(rtt)+1))
	return w.Observe(Probe{Sent: at, Recv: at + rtt, Store: s(read)})
}

func TestASteadyClockWithJitterNeverAlarms(t *testing.T) {
	t.Parallel()
	w := New(timing)
	r := rand.New(rand.NewPCG(1, 2))
	s := steady(-3 * time.Hour) // any offset: it is never used
	for i := range 2000 {
		at := time.Duration(i) * 500 * time.Millisecond
		rtt := time.Duration(r.Int64N(int64(4 * time.Second))) // a slow, jittery store
		v := probe(w, s, at, rtt, r)
		require.False(t, v.Raised, "probe %d", i)
		require.Zero(t, v.Excess)
	}
}

func TestAForwardStepBeyondSAlarmsShrinksAndClearsAfterATerm(t *testing.T) {
	t.Parallel()
	w := New(timing)
	r := rand.New(rand.NewPCG(3, 4))
	const rtt = 2 * time.Millisecond
	stepAt := 60 * time.Second
	s := func(at time.Duration) time.Time {
		if at >= stepAt {
			return epoch.Add(at + 20*time.Second)
		}
		return epoch.Add(at)
	}
	var lastBefore time.Duration
	at := time.Duration(0)
	for ; at < stepAt; at += time.Second {
		require.False(t, probe(w, s, at, rtt, r).Raised)
		lastBefore = at
	}
	v := probe(w, s, at, rtt, r)
	require.True(t, v.Raised)
	require.Equal(t, KindStep, v.Kind)
	require.InDelta(t, float64(20*time.Second), float64(v.Moved), float64(2*rtt))
	// The runway gives up what S did not cover: 5s, plus the bounds.
	require.GreaterOrEqual(t, v.Excess, 5*time.Second)
	require.LessOrEqual(t, v.Excess, 5*time.Second+2*rtt)
	require.Equal(t, v.Excess, w.Excess(at))

	// In force until the last probe from before the step is a term old,
	// whatever probes come meanwhile; then cleared by the next one.
	clearAt := lastBefore + timing.Lease
	for at += time.Second; at < clearAt; at += time.Second {
		v := probe(w, s, at, rtt, r)
		require.False(t, v.Raised)
		require.False(t, v.Cleared)
		require.Positive(t, v.Excess, "at %s", at)
	}
	v = probe(w, s, at, rtt, r)
	require.True(t, v.Cleared, "at %s", at)
	require.Zero(t, v.Excess)
	require.Zero(t, w.Excess(at))
}

func TestTickClearsAnAlarmWithNoFurtherProbe(t *testing.T) {
	t.Parallel()
	w := New(timing)
	w.Observe(Probe{Sent: 0, Recv: 0, Store: epoch})
	v := w.Observe(Probe{Sent: time.Second, Recv: time.Second, Store: epoch.Add(time.Second + 30*time.Second)})
	require.True(t, v.Raised)
	require.Equal(t, 15*time.Second, v.Excess)
	require.False(t, w.Tick(timing.Lease-time.Nanosecond))
	require.Equal(t, 15*time.Second, w.Excess(timing.Lease-time.Nanosecond))
	require.True(t, w.Tick(timing.Lease))
	require.Zero(t, w.Excess(timing.Lease))
	require.False(t, w.Tick(timing.Lease+time.Second))
}

func TestAStepWithinSIsNotAnAlarm(t *testing.T) {
	t.Parallel()
	w := New(timing)
	w.Observe(Probe{Sent: 0, Recv: time.Millisecond, Store: epoch})
	v := w.Observe(Probe{Sent: time.Second, Recv: time.Second + time.Millisecond, Store: epoch.Add(time.Second + 14*time.Second)})
	require.False(t, v.Raised)
	require.Zero(t, v.Excess)
}

func TestAStepHiddenByTheRoundTripIsNotAnAlarm(t *testing.T) {
	t.Parallel()
	// 16s of apparent movement, but the probe's round trip was 4s: the
	// store may have read its clock 2s from the midpoint, so the movement
	// is not certainly beyond S.
	w := New(timing)
	w.Observe(Probe{Sent: 0, Recv: 0, Store: epoch})
	v := w.Observe(Probe{Sent: 10 * time.Second, Recv: 14 * time.Second, Store: epoch.Add(12*time.Second + 16*time.Second)})
	require.False(t, v.Raised)
}

func TestABackwardStepAlarmsByItsMagnitude(t *testing.T) {
	t.Parallel()
	w := New(timing)
	w.Observe(Probe{Sent: 0, Recv: 0, Store: epoch})
	v := w.Observe(Probe{Sent: time.Second, Recv: time.Second, Store: epoch.Add(time.Second - 20*time.Second)})
	require.True(t, v.Raised)
	require.Equal(t, -20*time.Second, v.Moved)
	require.Equal(t, 5*time.Second, v.Excess)
}

func TestAFastClockAlarmsAsDrift(t *testing.T) {
	t.Parallel()
	w := New(timing)
	r := rand.New(rand.NewPCG(5, 6))
	// 25% fast: 22.5s gained over a 90s term, 250ms between probes.
	s := func(at time.Duration) time.Time { return epoch.Add(at + at/4) }
	var raised *Verdict
	for at := time.Duration(0); at < 2*timing.Lease; at += time.Second {
		v := probe(w, s, at, time.Millisecond, r)
		if v.Raised {
			raised = &v
			require.Greater(t, at, 4*timing.Skew, "not before the clock gained S: at %s", at)
			// A bucket holds term/32 of probes: detection is that much late at most.
			require.Less(t, at, 4*timing.Skew+timing.Lease/buckets+2*time.Second)
		}
	}
	require.NotNil(t, raised)
	require.Equal(t, KindDrift, raised.Kind)
}

func TestMemoryStaysBoundedUnderManyProbes(t *testing.T) {
	t.Parallel()
	w := New(timing)
	for i := range 200000 {
		at := time.Duration(i) * time.Millisecond
		w.Observe(Probe{Sent: at, Recv: at, Store: epoch.Add(at)})
	}
	require.LessOrEqual(t, len(w.window), buckets+1)
}
