package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"runtime"
	"time"
)

// event is one scheduled action.
type event struct {
	at  time.Duration
	seq uint64
	fn  func()
}

type eventHeap []*event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// loop is the simulator's scheduler: virtual time, the event queue, and
// the baton that lets exactly one thread run at a time.
type loop struct {
	rng    *rand.Rand
	now    time.Duration // virtual true time since the start
	events eventHeap
	seq    uint64
	yield  chan struct{} // a thread hands the baton back
	cur    *thread       // the thread running, nil on the loop itself
	over   bool          // the simulation ended: every thread unwinds
	trace  *ring
	steps  int
	// watchers are the contexts waited on (see watch).
	watchers []*watcher
	// storeSide are the threads the store side's runtime started.
	storeSide []*thread
}

func newLoop(seed uint64) *loop {
	return &loop{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), yield: make(chan struct{}), trace: newRing(64)}
}

// at schedules fn at virtual time t (not before now).
func (l *loop) at(t time.Duration, fn func()) {
	l.seq++
	heap.Push(&l.events, &event{at: max(t, l.now), seq: l.seq, fn: fn})
}

// logf records a line of the trace kept for a failing seed's report.
func (l *loop) logf(format string, args ...any) {
	l.trace.add(fmt.Sprintf("%10.3fs  ", l.now.Seconds()) + fmt.Sprintf(format, args...))
}

// runUntil processes events until virtual time end or until stop says so.
func (l *loop) runUntil(end time.Duration, stop func() bool) {
	for len(l.events) > 0 {
		if stop != nil && stop() {
			return
		}
		e := l.events[0]
		if e.at > end {
			break
		}
		heap.Pop(&l.events)
		l.now = e.at
		l.steps++
		e.fn()
		l.scanWatchers()
	}
	l.now = max(l.now, end)
}

// thread is one cooperative thread of a simulated process.
type thread struct {
	l       *loop
	name    string
	p       *proc // nil for store-side threads
	gen     int   // the process generation it belongs to
	wake    chan struct{}
	waitSeq uint64 // the wait a resume must match
	parked  bool
	done    bool
	sentAt  time.Duration // the send time of the thread's current call
}

// spawn starts fn as a thread of p (nil: a store-side thread) at now.
func (l *loop) spawn(p *proc, name string, fn func(t *thread)) *thread {
	t := &thread{l: l, name: name, p: p, wake: make(chan struct{})}
	if p != nil {
		t.gen = p.gen
		p.threads = append(p.threads, t)
	}
	go func() {
		<-t.wake
		defer func() { // also on runtime.Goexit (check), which no recover in the shipped code can stop
			t.done = true
			l.yield <- struct{}{}
		}()
		t.check()
		fn(t)
	}()
	t.parked = true
	seq := t.waitSeq
	l.at(l.now, func() { l.resume(t, seq) })
	return t
}

// resume hands the baton to t if it still waits for wait seq, and takes it
// back when t parks again or ends. A paused process's thread is resumed at
// the end of the pause instead.
func (l *loop) resume(t *thread, seq uint64) {
	if t.done || !t.parked || t.waitSeq != seq {
		return
	}
	if p := t.p; p != nil && !l.over && t.gen == p.gen && p.pausedUntil > l.now {
		// After a pause a process's threads run again in no set order,
		// as goroutines do after SIGCONT: each within a few ms.
		jitter := time.Duration(l.rng.Int64N(int64(5 * time.Millisecond)))
		l.at(p.pausedUntil+jitter, func() { l.resume(t, seq) })
		return
	}
	t.parked = false
	prev := l.cur
	l.cur = t
	t.wake <- struct{}{}
	<-l.yield
	l.cur = prev
}

// prepare returns the sequence number the thread's next park waits for:
// events scheduled with it resume the thread, later ones are stale.
func (t *thread) prepare() uint64 {
	t.waitSeq++
	return t.waitSeq
}

// park hands the baton back to the loop until an event resumes this wait.
func (t *thread) park() {
	t.parked = true
	t.l.yield <- struct{}{}
	<-t.wake
	t.check()
}

// check unwinds the thread if its process died or the simulation ended:
// runtime.Goexit runs the thread's deferred calls (which must not wait)
// and cannot be recovered, so a handler's or the worker's recover does not
// keep a dead thread going.
func (t *thread) check() {
	if t.l.over || (t.p != nil && (t.gen != t.p.gen || !t.p.up)) {
		runtime.Goexit()
	}
}

// sleep waits d of virtual time.
func (t *thread) sleep(d time.Duration) {
	seq := t.prepare()
	t.l.at(t.l.now+d, func() { t.l.resume(t, seq) })
	t.park()
}

// killAll unwinds every parked thread (the simulation is over).
func (l *loop) killAll(threads []*thread) {
	l.over = true
	for _, t := range threads {
		if !t.done && t.parked {
			t.parked = false
			t.wake <- struct{}{}
			<-l.yield
		}
	}
}

// ring keeps the last lines of the trace.
type ring struct {
	lines []string
	next  int
	full  bool
}

func newRing(n int) *ring { return &ring{lines: make([]string, n)} }

func (r *ring) add(s string) {
	r.lines[r.next] = s
	r.next = (r.next + 1) % len(r.lines)
	if r.next == 0 {
		r.full = true
	}
}

func (r *ring) all() []string {
	if !r.full {
		return append([]string(nil), r.lines[:r.next]...)
	}
	return append(append([]string(nil), r.lines[r.next:]...), r.lines[:r.next]...)
}
