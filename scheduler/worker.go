package scheduler

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// Handler works one run. Returning nil completes it (with the result set by
// Run.SetResult); Block(reason) blocks it; any other error fails the
// attempt, which is retried with backoff until its attempts are exhausted.
type Handler func(ctx context.Context, r *Run) error

// WorkerConfig configures a Worker. Zero values mean the defaults.
type WorkerConfig struct {
	// Owner identifies this worker in the runs it claims. Defaults to
	// "<hostname>-<pid>-<random>": a restarted worker is a new owner, and
	// the fence, not the owner, is what keeps it from writing as the old one.
	Owner string
	// Queues maps each queue to its concurrency limit. Required.
	Queues map[string]int
	// Timing is the run lease timing. Zero fields take lease.RunDefaults().
	// Heartbeats are synchronous (mode sync): every T_renew the worker
	// renews each run it holds with one fenced UPDATE.
	Timing lease.Timing
	// Backoff spaces retries. Zero fields take runs.Backoff's defaults.
	Backoff runs.Backoff
	// FetchInterval is how long an idle queue waits before claiming again.
	// Defaults to 50ms.
	FetchInterval time.Duration
	// FetchCooldown is how long a queue waits, after a handler frees a
	// slot, before claiming again, so that one claim fills several freed
	// slots. Defaults to 1ms.
	FetchCooldown time.Duration

	// Clock defaults to the real clock (it drives heartbeats and polling).
	Clock clock.Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Worker claims runs of its queues and works them with registered
// handlers, renewing each lease while its handler runs and cancelling the
// handler's context the moment the lease is lost.
type Worker struct {
	store    Store
	events   *EventCommitter
	cfg      WorkerConfig
	handlers map[string]Handler

	mu      sync.Mutex
	cancel  context.CancelFunc // stops fetching
	hctx    context.Context    // parent of every handler context
	hcancel context.CancelFunc
	fetch   sync.WaitGroup
	running sync.WaitGroup
	wake    map[string]chan struct{}

	completer *completer
}

// NewWorker validates cfg and returns a stopped worker. events is the
// process's event committer (started by the caller).
func NewWorker(store Store, events *EventCommitter, cfg WorkerConfig) (*Worker, error) {
	cfg.Timing = cfg.Timing.WithDefaults(lease.RunDefaults())
	if err := cfg.Timing.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Queues) == 0 {
		return nil, &journal.InputError{Field: "queues", Problem: "a worker needs at least one queue"}
	}
	for q, n := range cfg.Queues {
		if err := runs.ValidateQueue(q); err != nil {
			return nil, err
		}
		if n < 1 || n > 10000 {
			return nil, &journal.InputError{Field: "queues", Problem: fmt.Sprintf("queue %q: concurrency %d is outside 1..10000", q, n)}
		}
	}
	if cfg.Owner == "" {
		host, _ := os.Hostname()
		b := make([]byte, 4)
		_, _ = crand.Read(b)
		cfg.Owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
	}
	if err := journal.ValidateID("owner", cfg.Owner); err != nil {
		return nil, err
	}
	if cfg.FetchInterval <= 0 {
		cfg.FetchInterval = 50 * time.Millisecond
	}
	if cfg.FetchCooldown <= 0 {
		cfg.FetchCooldown = time.Millisecond
	}

	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Worker{store: store, events: events, cfg: cfg, handlers: map[string]Handler{}, wake: map[string]chan struct{}{},
		completer: newCompleter(store, cfg.Clock, cfg.Logger)}, nil
}

// Owner returns the worker's owner id.
func (w *Worker) Owner() string { return w.cfg.Owner }

// Handle registers the handler of a queue. Call before Start.
func (w *Worker) Handle(queue string, h Handler) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handlers[queue] = h
}

// Start begins claiming runs on every configured queue.
func (w *Worker) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		return errors.New("worker already started")
	}
	for q := range w.cfg.Queues {
		if w.handlers[q] == nil {
			return &journal.InputError{Field: "queues", Problem: fmt.Sprintf("queue %q has no handler", q)}
		}
	}
	var fctx context.Context
	fctx, w.cancel = context.WithCancel(ctx)
	w.hctx, w.hcancel = context.WithCancel(context.WithoutCancel(ctx))
	w.completer.start()
	for q, n := range w.cfg.Queues {
		w.wake[q] = make(chan struct{}, 1)
		w.fetch.Add(1)
		go w.fetchLoop(fctx, q, n)
	}
	return nil
}

// Stop stops claiming, waits for running handlers until ctx ends, then
// cancels their contexts and waits for them to return.
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	cancel := w.cancel
	w.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	w.fetch.Wait()
	done := make(chan struct{})
	go func() { w.running.Wait(); close(done) }()
	select {
	case <-done:
		w.hcancel()
		w.completer.close()
		return nil
	case <-ctx.Done():
		w.hcancel() // past the deadline: the handlers' contexts end now
		<-done
		w.completer.close()
		return ctx.Err()
	}
}

func (w *Worker) fetchLoop(ctx context.Context, queue string, limit int) {
	defer w.fetch.Done()
	slots := make(chan struct{}, limit)
	for {
		free := limit - len(slots)
		if free > 0 {
			sent := w.cfg.Clock.Now() // runway counts from the claim's send
			claimed, err := w.store.RunClaim(ctx, &driver.RunClaimParams{Queue: queue, Owner: w.cfg.Owner,
				Limit: min(free, runs.MaxClaimBatch), Lease: w.cfg.Timing.Lease})
			if err != nil && ctx.Err() == nil {
				w.cfg.Logger.Warn("claim failed", "queue", queue, "err", err)
			}
			for _, r := range claimed {
				slots <- struct{}{}
				w.running.Add(1)
				go func() {
					defer w.running.Done()
					defer func() {
						<-slots
						select { // a slot freed: claim again without waiting
						case w.wake[queue] <- struct{}{}:
						default:
						}
					}()
					w.work(r, sent)
				}()
			}
			if len(claimed) == free { // more may be waiting; claim again at once
				continue
			}
		}
		t, tick := w.cfg.Clock.NewTimer(w.cfg.FetchInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-tick:
		case <-w.wake[queue]:
			t.Stop()
			// Let a few more slots free up so one claim fills them all.
			ct, cool := w.cfg.Clock.NewTimer(w.cfg.FetchCooldown)
			select {
			case <-cool:
			case <-ctx.Done():
				ct.Stop()
				return
			}
		}
	}
}

// work runs one claimed run: heartbeat, handler, fenced final write.
func (w *Worker) work(row *driver.Run, claimSent time.Time) {
	ctx, lost := context.WithCancelCause(w.hctx)
	defer lost(nil)
	r := &Run{ID: row.ID, Queue: row.Queue, Payload: row.Payload, Attempt: row.Attempt, Fence: row.Fence,
		ctx: ctx, store: w.store, events: w.events, stream: newEventStream(), timing: w.cfg.Timing}
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		w.heartbeat(ctx, row, claimSent, lost)
	}()
	err := w.call(ctx, r)
	// Events emitted before returning belong to this attempt's outcome.
	if serr := r.Step(ctx); serr != nil && err == nil && ctx.Err() == nil {
		err = serr
	}
	lost(nil) // stops the heartbeat
	<-hbDone
	w.finish(r, err)
}

func (w *Worker) call(ctx context.Context, r *Run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return w.handlers[r.Queue](ctx, r)
}

// heartbeat renews the lease every T_renew with one synchronous fenced
// UPDATE (mode sync). A refusal (fenced, expired) means the lease is lost:
// the run's context is cancelled at once. A failed renewal is retried on the
// next tick; if no renewal has been confirmed for a full lease term minus S
// (measured from the send of the last confirmed one) the lease may be gone
// on the store clock, and the context is cancelled too.
func (w *Worker) heartbeat(ctx context.Context, row *driver.Run, claimSent time.Time, lost context.CancelCauseFunc) {
	c := w.cfg.Clock
	lastSend := claimSent
	ticker, tick := c.NewTicker(w.cfg.Timing.Renew)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		sent := c.Now()
		_, err := w.store.RunRenew(ctx, &driver.RunRenewParams{ID: row.ID, Fence: row.Fence, Owner: w.cfg.Owner, Lease: w.cfg.Timing.Lease})
		switch {
		case err == nil:
			lastSend = sent
		case errors.Is(err, lease.ErrFenced), errors.Is(err, lease.ErrLeaseExpired), errors.Is(err, lease.ErrNotFound):
			w.cfg.Logger.Warn("lease lost", "run", row.ID, "fence", row.Fence, "err", err)
			lost(fmt.Errorf("run %d: lease lost: %w", row.ID, err))
			return
		case ctx.Err() != nil:
			return
		default:
			w.cfg.Logger.Warn("renewal failed; retrying next tick", "run", row.ID, "err", err)
		}
		if lease.Runway(lastSend, c.Now(), w.cfg.Timing) <= 0 {
			lost(fmt.Errorf("run %d: no renewal confirmed within the lease term: %w", row.ID, lease.ErrLeaseExpired))
			return
		}
	}
}

// finish writes the run's outcome, fenced. A fenced refusal means another
// holder owns the run now; the result is discarded, as the protocol wants.
func (w *Worker) finish(r *Run, herr error) {
	ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Timing.Drain*2)
	defer cancel()
	var err error
	var be *blockError
	switch {
	case herr == nil:
		r.mu.Lock()
		result := r.result
		r.mu.Unlock()
		err = w.completer.complete(ctx, driver.RunCompletion{ID: r.ID, Fence: r.Fence, Result: result})
	case errors.As(herr, &be):
		_, err = w.store.RunBlock(ctx, &driver.RunBlockParams{ID: r.ID, Fence: r.Fence, Reason: truncate(be.reason)})
	default:
		_, err = w.store.RunFail(ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, Reason: truncate(herr.Error()),
			RetryAfter: w.cfg.Backoff.Delay(r.Attempt, rand.Float64())})
	}
	if err != nil {
		w.cfg.Logger.Warn("final write refused", "run", r.ID, "fence", r.Fence, "err", err)
	}
}

func truncate(s string) string {
	if len(s) > runs.MaxReasonBytes {
		s = s[:runs.MaxReasonBytes]
	}
	for !utf8Valid(s) {
		s = s[:len(s)-1]
	}
	return s
}
