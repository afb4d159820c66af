package server

import (
	"sync"
	"time"
)

// The throughput ring: what the dashboard's charts draw. Each run
// enqueued, claimed, completed or failed through this server's API is
// counted into a bucket of rateBucket on the server's clock; the last
// rateBuckets buckets (ten minutes) are kept, so the memory is fixed and
// nothing scans the store to draw a chart. Runs handled by in-process
// workers or other processes are not seen here: the chart is this
// server's own traffic, and says so.

const (
	rateBucket  = 10 * time.Second
	rateBuckets = 60
)

// rateCounts is one bucket's tallies.
type rateCounts struct {
	Enqueued  int64 `json:"enqueued"`
	Claimed   int64 `json:"claimed"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
}

// rateRing is a fixed ring of buckets indexed by bucket number (time
// since the Unix epoch / rateBucket), advanced lazily on each add or read
// — no goroutine, no ticker, so a fake clock drives it exactly.
type rateRing struct {
	mu      sync.Mutex // guards all below
	started bool       // last is set
	last    int64      // the newest bucket number written or read
	b       [rateBuckets]rateCounts
}

// advance moves the ring to bucket n, clearing the buckets skipped (all
// of them after a gap of a whole ring). Called with mu held.
func (r *rateRing) advance(n int64) {
	if !r.started || n-r.last >= rateBuckets {
		r.b = [rateBuckets]rateCounts{}
		r.started, r.last = true, n
		return
	}
	for i := r.last + 1; i <= n; i++ {
		r.b[slot(i)] = rateCounts{}
	}
	r.last = max(r.last, n)
}

// bucketOf is t's bucket number; slot is a bucket's place in the ring
// (non-negative for a time before 1970 too: a fake clock may start at 0).
func bucketOf(t time.Time) int64 { return t.UnixNano() / int64(rateBucket) }
func slot(n int64) int           { return int((n%rateBuckets + rateBuckets) % rateBuckets) }

// add counts into now's bucket. A time older than the ring's newest
// bucket (a clock stepped back) counts into the newest: never lost, never
// into a bucket already cleared for reuse.
func (r *rateRing) add(now time.Time, f func(*rateCounts)) {
	n := bucketOf(now)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.advance(n)
	f(&r.b[slot(r.last)])
}

// rateSample is one bucket on the wire: its start and its tallies.
type rateSample struct {
	At string `json:"at"`
	rateCounts
}

// series returns the ring oldest first, ending with now's bucket (still
// filling).
func (r *rateRing) series(now time.Time) []rateSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.advance(bucketOf(now))
	out := make([]rateSample, rateBuckets)
	for i := range out {
		n := r.last - rateBuckets + 1 + int64(i)
		out[i] = rateSample{At: stamp(time.Unix(0, n*int64(rateBucket))), rateCounts: r.b[slot(n)]}
	}
	return out
}
