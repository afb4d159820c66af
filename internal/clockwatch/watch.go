package clockwatch

import (
	"sync"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// buckets is how many slices one term is cut into: the window keeps at
// most buckets+1 of them, so memory is constant and a probe ages out at
// most term/buckets late (the alarm lasts that much longer: the safe side).
const buckets = 32

// Kind says what an alarm saw.
type Kind string

const (
	// KindStep: the newest probe moved by more than S against the probe
	// just before it.
	KindStep Kind = "step"
	// KindDrift: no single gap moved by S, but the offset moved by more
	// than S within one term.
	KindDrift Kind = "drift"
)

// Probe is one round trip that learned the store's time. Sent and Recv
// are readings of the caller's monotonic clock (offsets from any fixed
// origin, the same for every probe); Store is the store's wall time, read
// by the store somewhere between them.
type Probe struct {
	Sent, Recv time.Duration
	Store      time.Time
}

// Verdict is what one probe changed.
type Verdict struct {
	// Raised: this probe raised the alarm (it was not in force before).
	Raised bool
	// Cleared: the alarm was in force and is no longer (its evidence aged
	// out, or nothing new confirmed it within one term).
	Cleared bool
	// Kind is what the probe saw when it (re-)alarmed; "" otherwise.
	Kind Kind
	// Moved is the offset's movement against the older probes, for
	// certain (beyond both bounds), signed: positive when the store clock
	// gained. Zero when the probe saw nothing beyond S.
	Moved time.Duration
	// Bound is how far Moved may be from the true movement.
	Bound time.Duration
	// Excess is the shortening in force after this probe (see Watch.Excess).
	Excess time.Duration
}

// bucket aggregates the probes of one slice of time: the lowest and
// highest offset each could truly be (offset ± bound), and when the
// newest of them was taken.
type bucket struct {
	start, last time.Duration
	lo, hi      time.Duration // min(offset − bound), max(offset + bound)
	prevLo      time.Duration // of the newest probe only, for KindStep
	prevHi      time.Duration
}

// Watch tracks the store clock against the caller's monotonic clock. Its
// methods are safe for concurrent use.
type Watch struct {
	term, skew, width time.Duration

	mu      sync.Mutex
	window  []bucket      // oldest first
	excess  time.Duration // shortening in force while now < until
	until   time.Duration
	alarmed bool
	last    Verdict
}

// New returns a watch judging movements over t.Lease against t.Skew.
func New(t lease.Timing) *Watch {
	return &Watch{term: t.Lease, skew: t.Skew, width: max(t.Lease/buckets, time.Nanosecond)}
}

// Observe takes one probe and says what it changed. A probe with Recv
// before Sent (a fake clock set back) is taken with a zero round trip.
func (w *Watch) Observe(p Probe) Verdict {
	rtt := max(p.Recv-p.Sent, 0)
	at := p.Sent + rtt/2
	bound := (rtt + 1) / 2
	// The offset's origin is arbitrary (the caller's monotonic origin);
	// only its changes are used.
	off := p.Store.Round(0).Sub(time.Unix(0, 0).Add(at))
	lo, hi := lease.SubSat(off, bound), lease.AddSat(off, bound)

	w.mu.Lock()
	defer w.mu.Unlock()
	w.age(at)
	v := Verdict{}
	var until time.Duration
	for i, b := range w.window {
		// For certain: the smallest gap between the two probes' ranges.
		fwd := lease.SubSat(lo, b.hi)  // the store gained at least this
		back := lease.SubSat(b.lo, hi) // or lost at least this
		moved := fwd
		if back > fwd {
			moved = -back
		}
		if abs(moved) <= w.skew {
			continue
		}
		// At its worst within the bounds: what the runway must give up
		// beyond the S it already gives up.
		worst := max(lease.SubSat(hi, b.lo), lease.SubSat(b.hi, lo))
		ex := lease.SubSat(worst, w.skew)
		if ex > v.Excess {
			v.Excess = ex
		}
		if abs(moved) > abs(v.Moved) {
			v.Moved, v.Bound = moved, lease.SubSat(worst, abs(moved))
		}
		until = max(until, lease.AddSat(b.last, w.term))
		if i == len(w.window)-1 {
			pf, pb := lease.SubSat(lo, b.prevHi), lease.SubSat(b.prevLo, hi)
			if max(pf, pb) > w.skew {
				v.Kind = KindStep
			}
		}
	}
	if v.Moved != 0 && v.Kind == "" {
		v.Kind = KindDrift
	}
	w.insert(at, lo, hi)
	inForce := w.alarmed && at < w.until
	switch {
	case v.Moved != 0:
		if !inForce {
			w.excess, w.until = 0, 0
		}
		w.excess = max(w.excess, v.Excess)
		w.until = max(w.until, until)
		v.Raised = !inForce
		v.Cleared = w.alarmed && !inForce // an old alarm ended as a new one began
		w.alarmed = true
	case w.alarmed && !inForce:
		v.Cleared = true
		w.alarmed, w.excess = false, 0
	}
	v.Excess = w.excessAt(at)
	w.last = v
	return v
}

// Tick clears an alarm whose evidence has aged out by now (a reading of
// the caller's monotonic clock), with no probe needed: a holder whose
// store answers nothing must not stay shortened forever, nor be
// lengthened before the term is over. It reports whether it cleared one.
func (w *Watch) Tick(now time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.alarmed && now >= w.until {
		w.alarmed, w.excess = false, 0
		return true
	}
	return false
}

// Excess is how much the runway must be shortened at now, beyond S: 0
// unless an alarm is in force.
func (w *Watch) Excess(now time.Duration) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.excessAt(now)
}

func (w *Watch) excessAt(now time.Duration) time.Duration {
	if !w.alarmed || now >= w.until {
		return 0
	}
	return w.excess
}

// Alarmed reports whether an alarm is in force at now, and until when.
func (w *Watch) Alarmed(now time.Duration) (bool, time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.alarmed || now >= w.until {
		return false, 0
	}
	return true, w.until
}

// age drops the buckets whose newest probe is a term or more before at.
func (w *Watch) age(at time.Duration) {
	n := 0
	for n < len(w.window) && lease.SubSat(at, w.window[n].last) >= w.term {
		n++
	}
	if n > 0 {
		w.window = append(w.window[:0], w.window[n:]...)
	}
}

// insert adds the probe to the newest bucket, or starts one.
func (w *Watch) insert(at, lo, hi time.Duration) {
	if k := len(w.window); k > 0 && at-w.window[k-1].start < w.width && at >= w.window[k-1].start {
		b := &w.window[k-1]
		b.lo, b.hi = min(b.lo, lo), max(b.hi, hi)
		b.last = max(b.last, at)
		b.prevLo, b.prevHi = lo, hi
		return
	}
	if len(w.window) > buckets {
		w.window = append(w.window[:0], w.window[1:]...)
	}
	w.window = append(w.window, bucket{start: at, last: at, lo: lo, hi: hi, prevLo: lo, prevHi: hi})
}

func abs(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
