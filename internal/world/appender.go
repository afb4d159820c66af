package world

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/startstop"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// AppenderConfig configures an Appender. Zero values mean the defaults.
type AppenderConfig struct {
	// MaxBatch bounds the appends one transaction carries. Defaults to 512.
	MaxBatch int
	// Timeout bounds one batch's store call. Defaults to 10s.
	Timeout time.Duration
}

var _ startstop.Service = (*Appender)(nil)

// Appender group-commits appends: concurrent appends to one world share one
// driver.JournalAppend call, so one transaction and one fsync. There is no
// timer: while a batch is in flight the next callers queue, and the batch
// after it takes all of them. A lone appender therefore pays one round trip
// and one fsync, and N concurrent appenders share them. An append that
// finds its world idle is sent on its caller's goroutine (alone), so a lone
// appender also pays no goroutine hop.
//
// An append is acknowledged (Append returns a position) only after the
// store committed it. If the caller's context ends first, Append returns the
// context's error and the append's outcome is unknown: it may still commit.
//
// The Appender is started by NewAppender (its committers start on demand);
// Stop refuses new appends with lease.ErrClosed and waits for the batches
// queued, whose store calls are cancelled once Stop's context ends.
type Appender struct {
	d   driver.Driver
	cfg AppenderConfig

	life startstop.Lifecycle
	// base parents every batch's store call: it outlives Stop until
	// Stop's own context ends, so a Stop lets healthy batches finish but
	// does not wait past its deadline for a stuck store.
	base       context.Context
	cancelBase context.CancelFunc

	mu     sync.Mutex        // guards queues and closed; never held across a store call
	queues map[string]*queue // worlds with a committer running
	closed bool              // set by Stop: no committer starts after it
	wg     sync.WaitGroup

	batches, appends atomic.Int64
}

type queue struct {
	pending []*call
}

type call struct {
	ctx  context.Context
	req  journal.AppendRequest
	done chan struct{} // closed once answered; nil for a caller committing alone
	pos  int64
	err  error
}

// NewAppender returns an Appender over d.
func NewAppender(d driver.Driver, cfg AppenderConfig) *Appender {
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 512
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	a := &Appender{d: d, cfg: cfg, queues: map[string]*queue{}}
	a.base, a.cancelBase = context.WithCancel(context.Background())
	a.life.Name = "appender"
	// Nothing to start but the lifecycle: committers start on demand.
	_ = a.life.Start(context.Background(), func(context.Context) error { return nil })
	return a
}

// Start is a no-op kept for the one lifecycle (the Appender starts in
// NewAppender); after Stop it returns startstop.ErrStopped.
func (a *Appender) Start(ctx context.Context) error {
	return a.life.Start(ctx, func(context.Context) error { return nil })
}

// Stop refuses new appends and waits, until ctx ends, for the queued ones
// to commit; at ctx's end their store calls are cancelled and Stop returns
// ctx's error. It is idempotent.
func (a *Appender) Stop(ctx context.Context) error {
	return a.life.Stop(ctx, func(ctx context.Context) error {
		a.mu.Lock()
		a.closed = true
		a.mu.Unlock()
		done := make(chan struct{})
		go func() { a.wg.Wait(); close(done) }()
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			// Cancelled here, not by a context.AfterFunc on ctx stopped
			// on return: ctx's Done is closed before its AfterFuncs run,
			// so this return could stop one before it ran, and the store
			// calls would go on to the Appender's own timeout.
			a.cancelBase()
			return ctx.Err()
		}
	})
}

// Started is closed once the Appender started (at NewAppender).
func (a *Appender) Started() <-chan struct{} { return a.life.Started() }

// Stopped is closed once Stop returned with every committer finished.
func (a *Appender) Stopped() <-chan struct{} { return a.life.Stopped() }

// Append appends one data entry to world and returns its position once it
// is durable. Refusals are *journal.RefusedError (see the append rule);
// invalid input is *journal.InputError and reaches no store.
func (a *Appender) Append(ctx context.Context, world string, req journal.AppendRequest) (int64, error) {
	if err := journal.ValidateID("world", world); err != nil {
		return 0, err
	}
	if err := journal.ValidateAppend(&req); err != nil {
		return 0, err
	}
	c := &call{ctx: ctx, req: req}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return 0, fmt.Errorf("append to %s: %w", world, lease.ErrClosed)
	}
	q, running := a.queues[world]
	if !running {
		q = &queue{}
		a.queues[world] = q
		a.wg.Add(1)
		a.mu.Unlock()
		return a.alone(world, q, c)
	}
	c.done = make(chan struct{})
	q.pending = append(q.pending, c)
	a.mu.Unlock()
	select {
	case <-c.done:
		return c.pos, c.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// alone commits the append of a caller that found its world idle, on the
// caller's goroutine: a batch of one, as a committer would send it, but
// without a committer goroutine to start (its stack grows afresh through
// the store call every time) and two wake-ups to pay. The world's queue is
// marked running meanwhile, so appends arriving now queue behind it, and a
// committer takes them over afterwards (run), or the queue retires.
//
// The batch is this caller's alone, so its context may bound the store
// call — together with the Appender's timeout and Stop's deadline, as for
// any batch. If the context ends first, the call is interrupted (its
// outcome unknown, as in Append's doc) and Append returns the context's
// error; what differs from a queued append is only that Append returns once
// the store call has given up, not at the instant the context ends.
func (a *Appender) alone(world string, q *queue, c *call) (int64, error) {
	if err := c.ctx.Err(); err != nil { // as take: write nothing for a caller that gave up
		c.err = err
	} else {
		ctx, cancel := context.WithTimeout(c.ctx, a.cfg.Timeout)
		stop := context.AfterFunc(a.base, cancel)
		a.commit(ctx, world, []*call{c})
		stop()
		cancel()
	}
	a.mu.Lock()
	if len(q.pending) == 0 {
		delete(a.queues, world)
		a.mu.Unlock()
		a.wg.Done()
	} else {
		a.mu.Unlock()
		go a.run(world, q, true)
	}
	if c.err != nil && c.ctx.Err() != nil {
		return 0, c.ctx.Err()
	}
	return c.pos, c.err
}

// run commits the world's queue batch after batch until it is empty, then
// retires the queue (under mu, so a concurrent Append either joins this
// queue before it empties or commits alone). committed says a batch was
// just released (by alone), so the first batch is gathered too.
func (a *Appender) run(world string, q *queue, committed bool) {
	defer a.wg.Done()
	for ; ; committed = true {
		if committed {
			a.gather(q)
		}
		a.mu.Lock()
		batch := a.take(q)
		if batch == nil {
			delete(a.queues, world)
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
		// The batch belongs to many callers, so no one caller's context may
		// cancel it; it is bounded by the Appender's own timeout instead, and
		// by Stop's deadline.
		ctx, cancel := context.WithTimeout(a.base, a.cfg.Timeout)
		a.commit(ctx, world, batch)
		cancel()
	}
}

// gather gives the callers the last batch just released a chance to queue
// their next append before the next batch is taken. Without it, N
// closed-loop appenders split into two alternating batches of about N/2 (one
// in flight, the rest queued); with it they tend to share one. It only
// yields the processor (no timer, no sleep) and only when others are already
// queued, so a lone appender never waits for it.
func (a *Appender) gather(q *queue) {
	for range 2 {
		a.mu.Lock()
		n := len(q.pending)
		a.mu.Unlock()
		if n == 0 || n >= a.cfg.MaxBatch {
			return
		}
		runtime.Gosched()
	}
}

// take removes up to MaxBatch pending calls whose callers are still waiting;
// nil when none are left. Called with mu held.
func (a *Appender) take(q *queue) []*call {
	var batch []*call
	for len(q.pending) > 0 && len(batch) < a.cfg.MaxBatch {
		c := q.pending[0]
		q.pending[0] = nil
		q.pending = q.pending[1:]
		if c.ctx.Err() != nil { // the caller gave up before it was sent: write nothing for it
			c.err = c.ctx.Err()
			close(c.done)
			continue
		}
		batch = append(batch, c)
	}
	return batch
}

// commit sends batch in one store call under ctx and answers its callers
// (closing done, where a caller waits on it).
func (a *Appender) commit(ctx context.Context, world string, batch []*call) {
	reqs := make([]journal.AppendRequest, len(batch))
	for i, c := range batch {
		reqs[i] = c.req
	}
	out, err := a.d.JournalAppend(ctx, &driver.JournalAppendParams{World: world, Requests: reqs})
	a.batches.Add(1)
	a.appends.Add(int64(len(batch)))
	for i, c := range batch {
		if err != nil {
			c.err = err
		} else {
			c.pos, c.err = out[i].Position, out[i].Err
		}
		if c.done != nil {
			close(c.done)
		}
	}
}

// Stats returns how many batches were committed and how many appends they
// carried; appends/batches is the mean group-commit batch size.
func (a *Appender) Stats() (batches, appends int64) { return a.batches.Load(), a.appends.Load() }

// Wait blocks until every committer has finished its queue.
func (a *Appender) Wait() { a.wg.Wait() }
