package scheduler

import (
	"context"
	"sync"
	"time"

	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/rt"
)

// lazyHeartbeat starts a run's heartbeat goroutine when its first beat is
// due, T_renew after the claim, and not before: a handler that returns
// sooner — most do — never has one. Started with the run, the heartbeat
// cost every run a goroutine, its timer, a wake when the run's context
// ended and an event the run then waited on; now such a run costs one
// timer, stopped when the handler returns. The beats are the ones the
// goroutine made when it started with the run: the first at claim +
// T_renew, then every T_renew.
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

// stop is called once the run's context ended: no heartbeat starts from
// then on, and one that started has returned when stop does.
func (h *lazyHeartbeat) stop(w *Worker, beat rt.Stopper) {
	beat.Stop()
	h.mu.Lock()
	h.stopped = true
	done := h.done
	h.mu.Unlock()
	if done != nil {
		w.rt.Wait(context.Background(), done, -1)
	}
}
