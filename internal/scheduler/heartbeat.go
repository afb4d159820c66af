package scheduler

import (
	"context"
	"sync"
	"time"

	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/rt"
)

// lazyHeartbeat starts a run's heartbeat goroutine when its first beat is
// due, T_renew after the claim was sent, and not before: a handler that
// returns sooner — most do — never has one. Started with the run, the
// heartbeat cost every run a goroutine, its timer, a wake when the run's
// context ended and an event the run then waited on; then each run cost
// one timer of its own, stopped when the handler returned; now the runs of
// one claim share one (beatGroup), stopped when the last of them returns.
// The beats are the ones the goroutine made when it started with the run:
// the first at claim + T_renew, then every T_renew.
type lazyHeartbeat struct {
	mu      sync.Mutex
	stopped bool     // the run ended: start nothing
	done    rt.Event // made when the heartbeat starts, fired when it returns
}

// start is the first beat's timer: it starts the heartbeat loop, due at
// once, unless the run already ended.
func (h *lazyHeartbeat) start(w *Worker, ctx context.Context, e *keeper.Entry, first time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	done := w.rt.NewEvent()
	h.done = done
	w.life.Go("heartbeat", func() {
		defer done.Fire()
		w.heartbeat(ctx, e, first)
	})
}

// stop is called once the run's context ended: the run leaves its beat
// group, no heartbeat starts from then on, and one that started has
// returned when stop does.
func (h *lazyHeartbeat) stop(w *Worker, beats *beatGroup, i int) {
	beats.leave(i)
	h.mu.Lock()
	h.stopped = true
	done := h.done
	h.mu.Unlock()
	if done != nil {
		w.rt.Wait(context.Background(), done, -1)
	}
}

// beatGroup is the first-beat timer the runs of one claim share. Their
// first beats are all due at the same instant, the claim's send +
// T_renew (the keeper counts each lease from that send too), so one timer
// serves the batch: when it fires it starts the heartbeat of every member
// still working (lazyHeartbeat.start), and it is stopped once every member
// has left. A timer a run cost two allocations and a timer-heap insert and
// delete; a claim of a hundred runs now pays them once
// (TestRunsOfOneClaimShareOneTimer).
type beatGroup struct {
	w     *Worker
	sent  time.Time // the claim's send
	first time.Time // sent + T_renew
	timer rt.Stopper

	mu    sync.Mutex
	runs  []*Run // by member; nil once left, and all once fired
	live  int    // members that have not left
	fired bool
}

// newBeatGroup is the beat group of a claim of n runs sent at sent, its
// timer started.
func (w *Worker) newBeatGroup(sent time.Time, n int) *beatGroup {
	g := &beatGroup{w: w, sent: sent, first: sent.Add(w.cfg.Timing.Renew), runs: make([]*Run, n), live: n}
	g.timer = w.rt.After(max(g.first.Sub(w.cfg.Clock.Now()), 0), g.fire)
	return g
}

// join makes r member i: its heartbeat starts when the group fires, or at
// once if that already happened.
func (g *beatGroup) join(i int, r *Run) {
	g.mu.Lock()
	if !g.fired {
		g.runs[i] = r
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	r.hb.start(g.w, r.ctx, r.lease, g.first)
}

// leave ends member i's membership (joined or not); the last to leave
// stops the timer.
func (g *beatGroup) leave(i int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.live--
	if g.fired {
		return
	}
	g.runs[i] = nil
	if g.live == 0 {
		g.timer.Stop()
	}
}

// fire is the timer's call: the first beat of every member still working.
func (g *beatGroup) fire() {
	g.mu.Lock()
	g.fired = true
	rs := g.runs
	g.runs = nil
	g.mu.Unlock()
	for _, r := range rs {
		if r != nil {
			r.hb.start(g.w, r.ctx, r.lease, g.first)
		}
	}
}
