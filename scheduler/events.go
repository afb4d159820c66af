package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
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
	// Clock defaults to the real clock; Logger to slog.Default().
	Clock  clock.Clock
	Logger *slog.Logger
}

// EventCommitter is the group committer of run events (DurableBatched): it
// shares one multi-row INSERT among the events of all runs of the process,
// flushing when MaxBatch events are waiting or Linger after the first. A
// failed flush is retried (with backoff) until it succeeds: events are the
// source of truth and are never dropped; an event refused because its run
// is no longer held under its fence marks that run's stream fenced.
type EventCommitter struct {
	store driver.EffectStore
	cfg   EventCommitterConfig
	in    chan eventItem

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	flushes int64
	rows    int64
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
	changed chan struct{} // closed and replaced whenever durable or fenced changes
}

func newEventStream() *eventStream { return &eventStream{changed: make(chan struct{})} }

func (s *eventStream) next() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fenced {
		return 0, lease.ErrFenced
	}
	s.emitted++
	return s.emitted, nil
}

func (s *eventStream) settle(durableSeq int64, fenced bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if durableSeq > s.durable {
		s.durable = durableSeq
	}
	s.fenced = s.fenced || fenced
	close(s.changed)
	s.changed = make(chan struct{})
}

// wait blocks until every event emitted so far is durable, the stream is
// fenced (ErrFenced) or ctx ends.
func (s *eventStream) wait(ctx context.Context) error {
	s.mu.Lock()
	target := s.emitted
	s.mu.Unlock()
	for {
		s.mu.Lock()
		durable, fenced, changed := s.durable, s.fenced, s.changed
		s.mu.Unlock()
		switch {
		case fenced:
			return lease.ErrFenced
		case durable >= target:
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
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
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &EventCommitter{store: store, cfg: cfg, in: make(chan eventItem, cfg.Buffer)}
}

// add queues one event, blocking while the buffer is full.
func (c *EventCommitter) add(ctx context.Context, it eventItem) error {
	select {
	case c.in <- it:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Start runs the committer until Stop.
func (c *EventCommitter) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		return
	}
	var ctx context.Context
	ctx, c.cancel = context.WithCancel(context.Background())
	c.done = make(chan struct{})
	go c.loop(ctx)
}

// Stop flushes what is buffered once more and stops.
func (c *EventCommitter) Stop() {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.cancel = nil
	c.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// Stats returns the flushes made and the rows they carried.
func (c *EventCommitter) Stats() (flushes, rows int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushes, c.rows
}

func (c *EventCommitter) loop(ctx context.Context) {
	defer close(c.done)
	for {
		var first eventItem
		select {
		case first = <-c.in:
		case <-ctx.Done():
			c.drain()
			return
		}
		batch := []eventItem{first}
		timer, fire := c.cfg.Clock.NewTimer(c.cfg.Linger)
	gather:
		for len(batch) < c.cfg.MaxBatch {
			select {
			case it := <-c.in:
				batch = append(batch, it)
			case <-fire:
				break gather
			case <-ctx.Done():
				break gather
			}
		}
		timer.Stop()
		c.flush(batch)
	}
}

// drain flushes whatever is buffered at Stop.
func (c *EventCommitter) drain() {
	for {
		var batch []eventItem
	take:
		for len(batch) < c.cfg.MaxBatch {
			select {
			case it := <-c.in:
				batch = append(batch, it)
			default:
				break take
			}
		}
		if len(batch) == 0 {
			return
		}
		c.flush(batch)
	}
}

// flush writes one batch, retrying until the store answers; then settles
// every stream in it.
func (c *EventCommitter) flush(batch []eventItem) {
	evs := make([]driver.RunEventInsert, len(batch))
	for i := range batch {
		evs[i] = batch[i].ev
	}
	backoff := time.Millisecond
	var res *driver.RunEventAppendResult
	for {
		var err error
		res, err = c.store.RunEventAppend(context.Background(), &driver.RunEventAppendParams{Events: evs})
		if err == nil {
			break
		}
		if errors.Is(err, lease.ErrInvalid) { // cannot succeed on retry: fence the streams
			c.cfg.Logger.Error("event batch refused as invalid; its runs' streams are closed", "err", err)
			res = &driver.RunEventAppendResult{Fenced: allIndexes(len(evs))}
			break
		}
		c.cfg.Logger.Warn("event flush failed; retrying", "err", err, "events", len(evs))
		t, ch := c.cfg.Clock.NewTimer(backoff)
		<-ch
		t.Stop()
		backoff = min(backoff*2, time.Second)
	}
	c.mu.Lock()
	c.flushes++
	c.rows += int64(len(evs))
	c.mu.Unlock()
	fenced := make(map[int]bool, len(res.Fenced))
	for _, i := range res.Fenced {
		fenced[i] = true
	}
	for i, it := range batch {
		if fenced[i] {
			it.s.settle(0, true)
		} else {
			it.s.settle(it.ev.Seq, false)
		}
	}
	c.signalFlushed()
}

func allIndexes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
