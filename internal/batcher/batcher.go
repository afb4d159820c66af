package batcher

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/startstop"
)

var _ startstop.Service = (*Batcher[int])(nil)

// Batcher gathers items and flushes them in batches; see the package doc.
// It is safe for concurrent use.
type Batcher[T any] struct {
	startstop.Lifecycle
	cfg Config[T]
	rt  rt.Runtime

	// mu guards the queue and closed: Add checks closed and appends under
	// it, and the loop sets closed under it, so once closed is set nothing
	// more enters the queue and the last drain of it sees every item ever
	// accepted. It is never held across a flush or a wait.
	mu     sync.Mutex
	queue  []T
	closed bool
	space  rt.Event  // fired when room frees (or on close); nil while no Add waits
	avail  rt.Signal // the loop's wake-up: an item was queued, or the loop must look again

	flushes, rows atomic.Int64
}

// pend is an item waiting for a flush, with its flushes so far.
type pend[T any] struct {
	item     T
	attempts int
}

// New validates cfg and returns a stopped Batcher.
func New[T any](cfg Config[T]) (*Batcher[T], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	b := &Batcher[T]{cfg: cfg, rt: cfg.Runtime}
	b.Name = cfg.Name
	b.Lifecycle.RT = cfg.Runtime
	b.avail.RT = cfg.Runtime
	return b, nil
}

// Start runs the flush loop until Stop (or ctx ends, which stops it too).
func (b *Batcher[T]) Start(ctx context.Context) error {
	return b.Lifecycle.Start(ctx, func(runCtx context.Context) error {
		b.Go("flush", func() { b.loop(runCtx) })
		return nil
	})
}

// Stop flushes what is pending once more, within ctx, and stops; items it
// could not flush by then fail with a *StoppedError. It returns ctx's error
// if the loop had not finished by ctx's end.
func (b *Batcher[T]) Stop(ctx context.Context) error {
	err := b.Lifecycle.Stop(ctx, nil)
	select {
	case <-b.Started():
	default: // never started: no loop will drain the buffer, so fail it here
		b.failRest(b.closeAdds(nil), nil)
	}
	return err
}

// Add queues one item, blocking while the buffer is full until ctx ends.
// nil means accepted, not flushed: the item's outcome goes to Done. After
// Stop it returns ErrStopped and queues nothing.
func (b *Batcher[T]) Add(ctx context.Context, item T) error {
	for {
		ok, space, err := b.tryAdd(item)
		if ok || err != nil {
			return err
		}
		if b.rt.Wait(ctx, space, -1) == rt.Done {
			return ctx.Err()
		}
	}
}

// TryAdd is Add that never blocks: false, nil when the buffer is full
// (nothing queued). A caller that would otherwise make a context only to
// bound Add's wait makes it only when the buffer is full.
func (b *Batcher[T]) TryAdd(item T) (bool, error) {
	ok, _, err := b.tryAdd(item)
	return ok, err
}

// tryAdd queues item if the buffer has room; when full it returns the
// event that fires once room is made.
func (b *Batcher[T]) tryAdd(item T) (ok bool, space rt.Event, err error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return false, nil, &StoppedError{Name: b.cfg.Name}
	}
	if len(b.queue) < b.cfg.Buffer {
		b.queue = append(b.queue, item)
		b.mu.Unlock()
		b.avail.Notify()
		return true, nil, nil
	}
	if b.space == nil {
		b.space = b.rt.NewEvent()
	}
	space = b.space
	b.mu.Unlock()
	return false, space, nil
}

// Stats returns the flush calls made and the items they carried.
func (b *Batcher[T]) Stats() (flushes, items int64) { return b.flushes.Load(), b.rows.Load() }

// loop is the batcher's one goroutine. Flushes run under fctx, which
// outlives runCtx until the Stop call's own context ends: a Stop does not
// abort a healthy flush in flight, and the flush once more on stop is
// bounded by Stop's deadline.
func (b *Batcher[T]) loop(runCtx context.Context) {
	fctx, cancel := context.WithCancel(context.WithoutCancel(runCtx))
	defer cancel()
	stopWatch := b.rt.AfterFunc(runCtx, func() { b.rt.AfterFunc(b.StopContext(), cancel) })
	defer stopWatch()

	var pending []pend[T]
	var backoff time.Duration
	var last error // the last store error, for the items failed at stop
	for runCtx.Err() == nil {
		switch {
		case len(pending) == 0:
			if pending = b.take(pending, 1); len(pending) == 0 {
				b.avail.Wait(runCtx, -1)
				continue
			}
			pending = b.gather(runCtx, pending)
		case backoff > 0:
			if !b.sleep(runCtx, backoff) {
				continue
			}
			pending = b.take(pending, b.cfg.MaxBatch)
		default: // more than one batch was pending: flush the next at once
			pending = b.take(pending, b.cfg.MaxBatch)
		}
		var retried bool
		pending, retried, last = b.flushOnce(fctx, pending)
		backoff = b.next(backoff, retried)
	}

	// Stopping: flush everything accepted once more, retrying while fctx
	// lives, then fail what is left.
	pending = b.closeAdds(pending)
	for len(pending) > 0 && fctx.Err() == nil {
		var retried bool
		var err error
		if pending, retried, err = b.flushOnce(fctx, pending); err != nil {
			last = err
		}
		backoff = b.next(backoff, retried)
		if retried && !b.sleep(fctx, backoff) {
			break
		}
	}
	b.failRest(pending, last)
}

// gather waits, after the first item, until FlushAt items are pending or
// MaxWait has passed, whichever is first. With no MaxWait it yields once,
// so callers finishing right now join, and takes what is queued.
func (b *Batcher[T]) gather(ctx context.Context, pending []pend[T]) []pend[T] {
	if b.cfg.MaxWait == 0 {
		b.rt.Yield()
		return b.take(pending, b.cfg.FlushAt)
	}
	deadline := b.cfg.Clock.Now().Add(b.cfg.MaxWait)
	for {
		if pending = b.take(pending, b.cfg.FlushAt); len(pending) >= b.cfg.FlushAt {
			return pending
		}
		left := deadline.Sub(b.cfg.Clock.Now())
		if left <= 0 || b.avail.Wait(ctx, left) != rt.Fired {
			return b.take(pending, b.cfg.FlushAt)
		}
	}
}

// take moves queued items to pending, without waiting, until pending
// holds n, and wakes the Adds waiting for room.
func (b *Batcher[T]) take(pending []pend[T], n int) []pend[T] {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := min(n-len(pending), len(b.queue))
	if k <= 0 {
		return pending
	}
	for _, it := range b.queue[:k] {
		pending = append(pending, pend[T]{item: it})
	}
	clear(b.queue[:k]) // do not keep taken items alive
	b.queue = b.queue[k:]
	if len(b.queue) == 0 {
		b.queue = b.queue[:0:0] // let the drained backing array go
	}
	if b.space != nil {
		b.space.Fire()
		b.space = nil
	}
	return pending
}

// sleep waits d on the injected clock; false if ctx ended first.
func (b *Batcher[T]) sleep(ctx context.Context, d time.Duration) bool {
	return rt.Sleep(b.rt, ctx, d)
}

// next is the backoff after a flush: doubled from BackoffMin up to
// BackoffMax while items are retried, zero once a flush needed no retry.
func (b *Batcher[T]) next(backoff time.Duration, retried bool) time.Duration {
	if !retried {
		return 0
	}
	return min(max(2*backoff, b.cfg.BackoffMin), b.cfg.BackoffMax)
}

// flushOnce flushes the first MaxBatch pending items and returns what is
// still pending: the items to retry (first, in their order) and then the
// ones the batch did not carry. Done receives the items that are settled.
func (b *Batcher[T]) flushOnce(ctx context.Context, pending []pend[T]) (rest []pend[T], retried bool, last error) {
	n := min(len(pending), b.cfg.MaxBatch)
	if n == 0 {
		return pending, false, nil
	}
	items := make([]T, n)
	for i := range n {
		items[i] = pending[i].item
	}
	fctx, cancel := ctx, context.CancelFunc(func() {})
	if b.cfg.AttemptTimeout > 0 {
		fctx, cancel = b.rt.WithTimeout(ctx, b.cfg.AttemptTimeout)
	}
	errs := b.cfg.Flush(fctx, items)
	cancel()
	b.flushes.Add(1)
	b.rows.Add(int64(n))

	if errs == nil {
		b.done(items, nil)
		return pending[n:], false, nil
	}
	var doneItems []T
	var doneErrs []error
	var retry []pend[T]
	for i, err := range errs[:n] {
		p := pending[i]
		p.attempts++
		switch {
		case err == nil:
		case b.cfg.Retryable(err) && (b.cfg.MaxAttempts == 0 || p.attempts < b.cfg.MaxAttempts):
			retry = append(retry, p)
			last = err
			continue
		}
		doneItems = append(doneItems, p.item)
		doneErrs = append(doneErrs, err)
	}
	if len(doneItems) > 0 {
		b.done(doneItems, doneErrs)
	}
	if len(retry) > 0 {
		b.cfg.Logger.Warn("batch flush failed; retrying", "batcher", b.cfg.Name, "items", len(retry), "err", last)
	}
	return append(retry, pending[n:]...), len(retry) > 0, last
}

func (b *Batcher[T]) done(items []T, errs []error) {
	if b.cfg.Done != nil {
		b.cfg.Done(items, errs)
	}
}

// closeAdds stops new items and appends every accepted one to pending.
func (b *Batcher[T]) closeAdds(pending []pend[T]) []pend[T] {
	b.mu.Lock()
	b.closed = true
	if b.space != nil { // releases every Add blocked on a full buffer
		b.space.Fire()
		b.space = nil
	}
	b.mu.Unlock()
	return b.take(pending, int(^uint(0)>>1))
}

// failRest settles every item left at stop with a *StoppedError.
func (b *Batcher[T]) failRest(pending []pend[T], last error) {
	if len(pending) == 0 {
		return
	}
	items := make([]T, len(pending))
	errs := make([]error, len(pending))
	err := &StoppedError{Name: b.cfg.Name, Last: last}
	for i, p := range pending {
		items[i], errs[i] = p.item, err
	}
	b.cfg.Logger.Error("batcher stopped with items unflushed; they are failed back to their callers",
		"batcher", b.cfg.Name, "items", len(items), "last_err", last)
	b.done(items, errs)
}
