package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/batcher"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/startstop"
	"github.com/leasehold/leasehold/lease"
)

// EventCommitterConfig configures an EventCommitter. Zero values mean the
// defaults.
type EventCommitterConfig struct {
	// MaxBatch is the most events one statement carries. Defaults to 1000.
	MaxBatch int
	// Linger is how long the committer waits, after the first event of a
	// batch arrives, for more to join it. Defaults to 2ms.
	Linger time.Duration
	// Buffer bounds the events waiting for a batch; Emit blocks while it is
	// full. Defaults to 4 × MaxBatch.
	Buffer int
	// FlushTimeout bounds one flush's store call, so a connection that
	// went dead mid-statement is abandoned and the batch retried on
	// another. Defaults to 10s.
	FlushTimeout time.Duration
	// Clock defaults to the real clock; Logger to slog.Default().
	Clock  clock.Clock
	Logger *slog.Logger
	// Runtime runs the flush loop and makes the waits. Defaults to
	// rt.Real(Clock); the simulator sets its own.
	Runtime rt.Runtime
}

var _ startstop.Service = (*EventCommitter)(nil)

// EventCommitter is the group committer of run events (DurableBatched): it
// shares one multi-row INSERT among the events of all runs of the process,
// flushing when MaxBatch events are waiting or Linger after the first. It
// is an internal/batcher: a failed flush is retried with backoff on the
// injected clock until it succeeds, because events are the source of truth
// and are never dropped; an event refused because its run is no longer
// held under its fence marks that run's stream fenced. Stop flushes once
// more within its context's deadline; an event still unflushed then fails
// its run's Step with an error wrapping batcher.ErrStopped — it was never
// acknowledged, so nothing acknowledged is lost.
type EventCommitter struct {
	store driver.EffectStore
	cfg   EventCommitterConfig
	b     *batcher.Batcher[eventItem]

	mu      sync.Mutex
	flushed chan struct{} // closed at the next flush; see Subscribe

	hubMu sync.Mutex // guards hub; see Subscribe
	hub   *notifyHub // the store's notification listener while there are subscribers
}

type eventItem struct {
	ev driver.RunEventInsert
	s  *eventStream
}

// eventStream tracks one run handle's events: how many were emitted and up
// to which sequence number they are durable.
type eventStream struct {
	mu      sync.Mutex
	emitted int64
	durable int64
	fenced  bool
	failed  error // set when an event of the stream could not be made durable
	// changed is fired and dropped whenever durable, fenced or failed
	// changes; made by the first wait that has to block on it (event),
	// so a run that never waits for its events (most emit none) makes
	// no event.
	changed rt.Event
	rt      rt.Runtime
	// waking: a settle recorded an outcome and will wake the stream; later
	// outcomes of the same batch only record (EventCommitter.settle).
	waking bool
}

func newEventStream(r rt.Runtime) *eventStream { return &eventStream{rt: r} }

// event returns the event the next change fires, making it if no waiter
// has yet. Call with s.mu held.
func (s *eventStream) event() rt.Event {
	if s.changed == nil {
		s.changed = s.rt.NewEvent()
	}
	return s.changed
}

func (s *eventStream) next() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fenced {
		return 0, lease.ErrFenced
	}
	if s.failed != nil {
		return 0, s.failed
	}
	s.emitted++
	return s.emitted, nil
}

// record records one event's outcome — durable up to durableSeq, or the
// stream fenced — without waking anyone, and reports whether the caller
// must wake the stream (wake): true for the first outcome recorded since
// the last wake, so a batch holding many of a stream's events wakes its
// waiters once, after all of them are recorded.
func (s *eventStream) record(durableSeq int64, fenced bool) (mustWake bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if durableSeq > s.durable {
		s.durable = durableSeq
	}
	s.fenced = s.fenced || fenced
	mustWake = !s.waking
	s.waking = true
	return mustWake
}

// wake fires the stream's changed event once for what was recorded since
// the last wake. An outcome recorded after this wake (another settle)
// asks for a wake of its own.
func (s *eventStream) wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waking = false
	if s.changed != nil { // someone waits: wake them; the next wait makes a new event
		s.changed.Fire()
		s.changed = nil
	}
}

// fail marks the stream failed: one of its events was not made durable
// (the committer stopped first, or it was never queued), so a Step can
// never be acknowledged for it.
func (s *eventStream) fail(err error) {
	s.mu.Lock()
	if s.failed == nil {
		s.failed = err
	}
	mustWake := !s.waking
	s.waking = true
	s.mu.Unlock()
	if mustWake {
		s.wake()
	}
}

// wait blocks until every event emitted so far is durable, the stream is
// fenced (ErrFenced) or failed, or ctx ends.
func (s *eventStream) wait(ctx context.Context) error {
	s.mu.Lock()
	target := s.emitted
	s.mu.Unlock()
	for {
		s.mu.Lock()
		durable, fenced, failed := s.durable, s.fenced, s.failed
		var changed rt.Event
		if !fenced && failed == nil && durable < target {
			changed = s.event() // read with the state: a change after this fires it
		}
		s.mu.Unlock()
		switch {
		case fenced:
			return lease.ErrFenced
		case failed != nil:
			return failed
		case durable >= target:
			return nil
		}
		if s.rt.Wait(ctx, changed, -1) == rt.Done {
			return ctx.Err()
		}
	}
}

// NewEventCommitter returns a stopped committer.
func NewEventCommitter(store driver.EffectStore, cfg EventCommitterConfig) *EventCommitter {
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 1000
	}
	if cfg.Linger <= 0 {
		cfg.Linger = 2 * time.Millisecond
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 4 * cfg.MaxBatch
	}
	if cfg.FlushTimeout <= 0 {
		cfg.FlushTimeout = 10 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Runtime == nil {
		cfg.Runtime = rt.Real(cfg.Clock)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &EventCommitter{store: store, cfg: cfg}
	b, err := batcher.New(batcher.Config[eventItem]{Name: "event committer",
		MaxBatch: cfg.MaxBatch, MaxWait: cfg.Linger, Buffer: cfg.Buffer, AttemptTimeout: cfg.FlushTimeout,
		BackoffMin: time.Millisecond, BackoffMax: time.Second,
		Flush: c.flush, Retryable: retryableEventError, Done: c.settle,
		Clock: cfg.Clock, Runtime: cfg.Runtime, Logger: cfg.Logger})
	if err != nil {
		panic(err) // unreachable: Flush is set and the sizes are defaulted above
	}
	c.b = b
	return c
}

// add queues one event, blocking while the buffer is full.
func (c *EventCommitter) add(ctx context.Context, it eventItem) error { return c.b.Add(ctx, it) }

// Start runs the committer until Stop (or ctx ends).
func (c *EventCommitter) Start(ctx context.Context) error { return c.b.Start(ctx) }

// Stop flushes what is buffered once more, within ctx's deadline, and
// stops. Events still unflushed then fail their runs' Step with an error
// wrapping batcher.ErrStopped; Stop returns ctx's error if the flush loop
// had not finished by ctx's end.
func (c *EventCommitter) Stop(ctx context.Context) error { return c.b.Stop(ctx) }

// Started is closed once the committer started.
func (c *EventCommitter) Started() <-chan struct{} { return c.b.Started() }

// Stopped is closed once the committer stopped.
func (c *EventCommitter) Stopped() <-chan struct{} { return c.b.Stopped() }

// Stats returns the flushes made and the rows they carried.
func (c *EventCommitter) Stats() (flushes, rows int64) { return c.b.Stats() }

// errInvalidBatch marks a batch the store refused as invalid: it cannot
// succeed on retry, so its runs' streams are closed (fenced).
var errInvalidBatch = errors.New("event batch refused as invalid")

func retryableEventError(err error) bool {
	return !errors.Is(err, lease.ErrFenced) && !errors.Is(err, errInvalidBatch)
}

// flush writes one batch in one statement and reports each event's
// outcome: all fail together on a store error, and only the events the
// store refused for their fence fail alone.
func (c *EventCommitter) flush(ctx context.Context, batch []eventItem) []error {
	evs := make([]driver.RunEventInsert, len(batch))
	for i := range batch {
		evs[i] = batch[i].ev
	}
	res, err := c.store.RunEventAppend(ctx, &driver.RunEventAppendParams{Events: evs})
	if err != nil {
		if errors.Is(err, lease.ErrInvalid) {
			c.cfg.Logger.Error("event batch refused as invalid; its runs' streams are closed", "err", err)
			err = fmt.Errorf("%w: %w", errInvalidBatch, err)
		}
		return sameError(len(batch), err)
	}
	if len(res.Fenced) == 0 {
		return nil
	}
	errs := make([]error, len(batch))
	for _, i := range res.Fenced {
		errs[i] = lease.ErrFenced
	}
	return errs
}

// settle records each event's final outcome on its run's stream (the
// batcher calls it once per batch), then wakes each stream it touched
// once — not once per event: a batch of 1,000 events of 100 runs fires
// 100 events, not 1,000 — and then subscribers.
func (c *EventCommitter) settle(batch []eventItem, errs []error) {
	var woken []*eventStream
	for i, it := range batch {
		var err error
		if errs != nil {
			err = errs[i]
		}
		var mustWake bool
		switch {
		case err == nil:
			mustWake = it.s.record(it.ev.Seq, false)
		case errors.Is(err, lease.ErrFenced), errors.Is(err, errInvalidBatch):
			mustWake = it.s.record(0, true)
		default: // the committer stopped first: never acknowledged, failed back
			it.s.fail(fmt.Errorf("event %d of run %d under fence %d not durable: %w", it.ev.Seq, it.ev.RunID, it.ev.Fence, err))
		}
		if mustWake {
			woken = append(woken, it.s)
		}
	}
	for _, s := range woken {
		s.wake()
	}
	c.signalFlushed()
}

func sameError(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}
