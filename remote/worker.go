package remote

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/internal/handle"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// WorkerConfig configures a remote Worker. Zero values mean the defaults.
type WorkerConfig struct {
	// Client is the server's client. Required.
	Client *Client
	// Owner identifies this worker in the runs it claims. Defaults to
	// "<hostname>-<pid>-remote-<random>".
	Owner string
	// Queues maps each queue to its concurrency limit. Required.
	Queues map[string]int
	// ClaimBatch bounds one claim (the server's limit is 1000). Defaults
	// to the free slots, at most 100.
	ClaimBatch int
	// Wait is the claim's long poll. Defaults to 5s.
	Wait time.Duration
	// Renew is how often a held run is renewed. Defaults to a fifth of the
	// first runway the server answers (15s with its default timing), so
	// the deadline is renewed well before it comes.
	Renew time.Duration
	// CompleteBatch bounds one complete-many call. Completions of
	// handlers that finish together share one call and one store commit.
	// Defaults to 1000.
	CompleteBatch int
	// MaxSnoozes bounds how often a run may snooze (leasehold.Snooze)
	// over its life, as leasehold.WorkerConfig.MaxSnoozes does: past it,
	// a snooze fails the attempt instead, with the limit as the reason.
	// Defaults to 100 (runs.DefaultMaxSnoozes); at most
	// runs.MaxSnoozesLimit; negative is refused (ErrInvalid).
	MaxSnoozes int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Worker claims runs through the API and works them with registered
// handlers — leasehold.Handler, the in-process worker's — renewing each
// lease while its handler runs and cancelling the handler's context at
// the deadline the server vouched for, or when the store refuses the
// lease. Create one with NewWorker.
type Worker struct {
	cfg      WorkerConfig
	owner    string
	log      *slog.Logger
	handlers map[string]leasehold.Handler

	claimCtx    context.Context // ends claiming (Stop)
	stopClaims  context.CancelFunc
	handlerCtx  context.Context // ends handlers (Stop's deadline)
	stopHandler context.CancelFunc
	claimers    sync.WaitGroup
	running     sync.WaitGroup
	done        *completer

	mu      sync.Mutex
	started bool
	stopped bool
}

// NewWorker validates cfg and returns a worker; register handlers with
// Handle, then Start.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	if cfg.Client == nil {
		return nil, fmt.Errorf("remote: a worker needs a Client: %w", leasehold.ErrInvalid)
	}
	if len(cfg.Queues) == 0 {
		return nil, fmt.Errorf("remote: a worker needs at least one queue: %w", leasehold.ErrInvalid)
	}
	for q, n := range cfg.Queues {
		if err := runs.ValidateQueue(q); err != nil {
			return nil, err
		}
		if n <= 0 {
			return nil, &journal.InputError{Field: "queues", Problem: fmt.Sprintf("queue %q: concurrency %d must be positive", q, n)}
		}
	}
	if cfg.MaxSnoozes == 0 {
		cfg.MaxSnoozes = runs.DefaultMaxSnoozes
	}
	if err := runs.ValidateMaxSnoozes(cfg.MaxSnoozes); err != nil {
		return nil, err
	}
	if cfg.Owner == "" {
		host, _ := os.Hostname()
		cfg.Owner = fmt.Sprintf("%s-%d-remote-%s", host, os.Getpid(), strconv.FormatInt(time.Now().UnixNano()%1e9, 36))
	}
	if cfg.Wait <= 0 {
		cfg.Wait = 5 * time.Second
	}
	if cfg.CompleteBatch <= 0 {
		cfg.CompleteBatch = 1000
	}
	if cfg.ClaimBatch <= 0 {
		cfg.ClaimBatch = 100
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &Worker{cfg: cfg, owner: cfg.Owner, log: cfg.Logger, handlers: map[string]leasehold.Handler{}}
	w.claimCtx, w.stopClaims = context.WithCancel(context.Background())
	w.handlerCtx, w.stopHandler = context.WithCancel(context.Background())
	w.done = newCompleter(cfg.Client, cfg.CompleteBatch, cfg.Logger)
	return w, nil
}

// Owner is the owner id this worker claims runs under.
func (w *Worker) Owner() string { return w.owner }

// Handle registers the handler of a queue. Register before Start.
func (w *Worker) Handle(queue string, h leasehold.Handler) { w.handlers[queue] = h }

// Start starts claiming every queue that has a handler.
func (w *Worker) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return fmt.Errorf("remote: worker stopped: %w", leasehold.ErrClosed)
	}
	if w.started {
		return nil
	}
	for q := range w.cfg.Queues {
		if w.handlers[q] == nil {
			return fmt.Errorf("remote: queue %q has no handler: %w", q, leasehold.ErrInvalid)
		}
	}
	w.started = true
	go w.done.run()
	for q, n := range w.cfg.Queues {
		w.claimers.Go(func() { w.claimLoop(q, n) })
	}
	return nil
}

// Stop stops claiming, waits for running handlers until ctx's deadline,
// then cancels them and waits for their last writes. Idempotent.
func (w *Worker) Stop(ctx context.Context) error {
	w.mu.Lock()
	first := !w.stopped
	w.stopped = true
	started := w.started
	w.mu.Unlock()
	if !first || !started {
		return nil
	}
	w.stopClaims()
	w.claimers.Wait()
	idle := make(chan struct{})
	go func() { w.running.Wait(); close(idle) }()
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		w.stopHandler()
		<-idle
		err = ctx.Err()
	}
	w.stopHandler()
	w.done.stop()
	w.cfg.Client.CloseIdleConnections()
	return err
}

// claimLoop keeps up to slots runs of queue in hand: it claims as many
// runs as there are free slots (long-polling when there are none to
// claim) and starts a handler for each.
func (w *Worker) claimLoop(queue string, slots int) {
	sem := make(chan struct{}, slots)
	backoff := time.Duration(0)
	for {
		select { // one free slot at least
		case sem <- struct{}{}:
		case <-w.claimCtx.Done():
			return
		}
		free := 1
	more:
		for free < slots && free < w.cfg.ClaimBatch {
			select {
			case sem <- struct{}{}:
				free++
			default:
				break more
			}
		}
		leases, err := w.cfg.Client.Claim(w.claimCtx, queue, w.owner, free, w.cfg.Wait)
		for range free - len(leases) {
			<-sem
		}
		if err != nil {
			if w.claimCtx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, 10*time.Millisecond), 2*time.Second)
			w.log.Warn("remote worker: claim failed; retrying", "queue", queue, "in", backoff, "err", err)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-w.claimCtx.Done():
				t.Stop()
				return
			}
			continue
		}
		backoff = 0
		for _, l := range leases {
			w.running.Go(func() {
				defer func() { <-sem }()
				w.work(queue, l)
			})
		}
	}
}

// work runs one claimed run's handler and writes its outcome.
func (w *Worker) work(queue string, l Lease) {
	ctx, cancel := context.WithCancelCause(w.handlerCtx)
	defer cancel(nil)
	r := &run{w: w, l: l, ctx: ctx, cancel: cancel, deadline: l.Deadline, sent: l.Sent}
	stopKeep := make(chan struct{})
	kept := make(chan struct{})
	go r.keep(stopKeep, kept)
	h := handle.New(handle.Run{ID: l.ID, Queue: l.Queue, Payload: l.Payload, Attempt: l.Attempt, Fence: l.Fence}, r).(*leasehold.RunHandle)
	herr := call(w.handlers[queue], ctx, h)
	close(stopKeep)
	<-kept
	var lost *lease.LostError
	if errors.As(context.Cause(ctx), &lost) {
		w.log.Warn("remote worker: run given up; not writing its outcome", "run", l.ID, "fence", l.Fence, "cause", lost)
		return
	}
	w.finish(r, herr)
}

// call runs the handler, turning a panic into an error.
func call(h leasehold.Handler, ctx context.Context, rh *leasehold.RunHandle) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return h(ctx, rh)
}

// finish writes a handler's outcome, fenced: complete (batched), block,
// snooze, or fail. A snooze the server refuses for the run's bound (a
// conflict: the run is still held) fails the attempt instead, with the
// refusal as the reason — the in-process worker's rule (scheduler.snooze).
func (w *Worker) finish(r *run, herr error) {
	c, id, fence := w.cfg.Client, r.l.ID, r.l.Fence
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	if herr == nil {
		r.mu.Lock()
		result, resErr := r.result, r.resErr
		r.mu.Unlock()
		if resErr != nil {
			herr = resErr
		} else {
			err = w.done.complete(ctx, Completion{ID: id, Fence: fence, Result: result})
		}
	}
	if herr != nil {
		if reason, ok := scheduler.AsBlock(herr); ok {
			err = c.Block(ctx, id, fence, journal.SafeReason(reason))
		} else if delay, invalid, ok := scheduler.AsSnooze(herr); ok && invalid == nil {
			_, err = c.Snooze(ctx, id, fence, delay, w.cfg.MaxSnoozes)
			if p, isP := AsProblem(err); isP && p.Kind() == "conflict" {
				err = c.Fail(ctx, id, fence, journal.SafeReason(err.Error()), -1)
			}
		} else {
			err = c.Fail(ctx, id, fence, journal.SafeReason(herr.Error()), -1)
		}
	}
	if err != nil {
		w.log.Warn("remote worker: writing a run's outcome failed", "run", id, "fence", fence, "err", err)
	}
}

// keep renews the run while its handler runs and stops the handler at its
// deadline (self-stop) or when the store refuses the lease.
func (r *run) keep(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	every := r.w.cfg.Renew
	if every <= 0 {
		every = min(max(time.Duration(r.l.RunwayMS)*time.Millisecond/5, 10*time.Millisecond), 15*time.Second)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	dl := time.NewTimer(time.Until(r.getDeadline()))
	defer dl.Stop()
	for {
		select {
		case <-stop:
			return
		case <-dl.C:
			if left := time.Until(r.getDeadline()); left > 0 { // extended meanwhile
				dl.Reset(left)
				continue
			}
			r.cancel(&lease.LostError{Ref: r.ref(), SelfStop: true, Lag: r.lag()})
			return
		case <-tick.C:
			ctx, cancel := context.WithDeadline(r.ctx, r.getDeadline())
			ren, err := r.w.cfg.Client.Renew(ctx, r.l.ID, r.l.Fence, r.w.owner)
			cancel()
			switch {
			case err == nil:
				r.extend(ren.Sent, ren.Deadline)
			case lostErr(err):
				r.lose(err)
				return
			case r.ctx.Err() == nil:
				r.w.log.Warn("remote worker: renewal failed; the deadline stands", "run", r.l.ID, "err", err)
			}
		}
	}
}
