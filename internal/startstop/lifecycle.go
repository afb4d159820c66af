package startstop

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"

	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/lease"
)

// ErrStopped is returned by Start after Stop: a stopped service is never
// restarted; make a new one. It wraps lease.ErrClosed, the sentinel users
// match.
var ErrStopped = fmt.Errorf("startstop: service already stopped: %w", lease.ErrClosed)

// Service is the lifecycle every long-running component exposes.
type Service interface {
	// Start starts the service. It is idempotent while the service runs and
	// returns ErrStopped after Stop.
	Start(ctx context.Context) error
	// Stop stops the service, waiting for it until ctx ends; then it
	// returns ctx's error. It is idempotent and never blocks past ctx.
	Stop(ctx context.Context) error
	// Started is closed once Start succeeded.
	Started() <-chan struct{}
	// Stopped is closed once the service stopped: every goroutine it
	// started has returned (or it was stopped without ever starting).
	Stopped() <-chan struct{}
}

type state int

const (
	idle state = iota
	starting
	running
	stopping
	stopped
)

// Lifecycle is embedded by a service. The zero value is an idle service
// named "service"; set Name before the first Start for logs and labels.
type Lifecycle struct {
	// Name labels the service's goroutines (pprof label "service").
	Name string
	// RT starts the service's goroutines (Go). Defaults to the real
	// runtime; the simulator sets its own.
	RT rt.Runtime

	mu       sync.Mutex // guards the fields below; never held while a step runs
	state    state
	turn     chan struct{} // closed when a starting or stopping transition ends
	cancel   context.CancelFunc
	stopCtx  context.Context
	wg       sync.WaitGroup
	started  chan struct{}
	stopped  chan struct{}
	initOnce sync.Once

	labelsMu sync.Mutex           // guards labels
	labels   map[string]*goLabels // by loop name, at most maxCachedLoops
}

// goLabels is what Go starts a loop's goroutines with: the loop's pprof
// labels, as a context, and its goroutine name. They are made once per
// loop name and reused: a worker starts two goroutines per run, and
// building them afresh each time (pprof.Do: a label set, a label map, a
// context, the name string) was about a tenth of the run path's
// allocations (docs/BENCHMARKS.md).
type goLabels struct {
	ctx  context.Context
	name string
}

// maxCachedLoops bounds the labels cache: some loop names carry a world
// or a queue name, and a long-lived host may see any number of those.
// Past the bound a loop's labels are made per call, as before.
const maxCachedLoops = 64

func (l *Lifecycle) init() {
	l.initOnce.Do(func() {
		l.started = make(chan struct{})
		l.stopped = make(chan struct{})
	})
}

// Started is closed once Start succeeded.
func (l *Lifecycle) Started() <-chan struct{} { l.init(); return l.started }

// Stopped is closed once the service has stopped.
func (l *Lifecycle) Stopped() <-chan struct{} { l.init(); return l.stopped }

// Start runs start with the service's run context, which is derived from
// ctx (the service ends when ctx does, as when stopped) and cancelled by
// Stop. start launches the service's goroutines with Go and returns; an
// error from it cancels the run context, waits for any goroutine it began
// and leaves the service idle. A Start racing another waits for it.
func (l *Lifecycle) Start(ctx context.Context, start func(ctx context.Context) error) error {
	l.init()
	for {
		l.mu.Lock()
		switch l.state {
		case running:
			l.mu.Unlock()
			return nil
		case stopping, stopped:
			l.mu.Unlock()
			return fmt.Errorf("starting %s: %w", l.name(), ErrStopped)
		case starting:
			turn := l.turn
			l.mu.Unlock()
			select {
			case <-turn:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		// idle: this call starts the service.
		l.state = starting
		l.turn = make(chan struct{})
		runCtx, cancel := context.WithCancel(ctx)
		l.cancel = cancel
		l.mu.Unlock()

		err := start(runCtx)

		l.mu.Lock()
		turn := l.turn
		if err != nil {
			l.state = idle
			l.cancel = nil
		} else {
			l.state = running
			close(l.started)
		}
		l.mu.Unlock()
		close(turn)
		if err != nil {
			cancel()
			l.wg.Wait() // goroutines begun before the failure see runCtx end
			return err
		}
		return nil
	}
}

// Go runs fn on a new goroutine counted by the lifecycle (Stop waits for
// it) and labelled with the service's name and loop. Call it from the start
// step or from a goroutine the lifecycle already counts.
func (l *Lifecycle) Go(loop string, fn func()) {
	l.wg.Add(1)
	g := l.loopLabels(loop)
	rt.Or(l.RT).Go(g.name, func() {
		defer l.wg.Done()
		// The goroutine ends with fn: its labels need no restoring.
		pprof.SetGoroutineLabels(g.ctx)
		fn()
	})
}

// loopLabels returns loop's labels, cached (goLabels).
func (l *Lifecycle) loopLabels(loop string) *goLabels {
	l.labelsMu.Lock()
	defer l.labelsMu.Unlock()
	if g, ok := l.labels[loop]; ok {
		return g
	}
	g := &goLabels{
		ctx:  pprof.WithLabels(context.Background(), pprof.Labels("service", l.name(), "loop", loop)),
		name: l.name() + " " + loop,
	}
	if l.labels == nil {
		l.labels = make(map[string]*goLabels)
	}
	if len(l.labels) < maxCachedLoops {
		l.labels[loop] = g
	}
	return g
}

// Stop stops the service: it runs drain (if not nil) with ctx while the
// service still runs — the worker waits for its handlers there — then
// cancels the run context and waits, until ctx ends, for every goroutine
// started with Go. A loop that must flush once more on stop reads the
// deadline it may use with StopContext. Stop of a service never started
// marks it stopped. A second Stop waits for the first, bounded by its own
// ctx.
func (l *Lifecycle) Stop(ctx context.Context, drain func(ctx context.Context) error) error {
	l.init()
	for {
		l.mu.Lock()
		switch l.state {
		case idle:
			l.state = stopped
			l.stopCtx = ctx
			close(l.stopped)
			l.mu.Unlock()
			return nil
		case starting:
			turn := l.turn
			l.mu.Unlock()
			select {
			case <-turn:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		case stopping, stopped:
			l.mu.Unlock()
			select {
			case <-l.stopped:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		// running: this call stops the service.
		l.state = stopping
		l.stopCtx = ctx
		cancel := l.cancel
		l.mu.Unlock()

		var derr error
		if drain != nil {
			derr = drain(ctx)
		}
		cancel()
		go func() { // closes Stopped when the last goroutine returns, even past ctx
			l.wg.Wait()
			l.mu.Lock()
			l.state = stopped
			l.mu.Unlock()
			close(l.stopped)
		}()
		select {
		case <-l.stopped:
			return derr
		case <-ctx.Done():
			return fmt.Errorf("stopping %s: %w", l.name(), ctx.Err())
		}
	}
}

// StopContext returns the context of the Stop call that stopped the
// service: a loop flushing once more after its run context ended bounds
// that flush by it. Before any Stop (the run context ended because the
// Start context did) it returns a cancelled context, so the last flush is
// one attempt that fails fast rather than one that may hang.
func (l *Lifecycle) StopContext() context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopCtx != nil {
		return l.stopCtx
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func (l *Lifecycle) name() string {
	if l.Name == "" {
		return "service"
	}
	return l.Name
}
