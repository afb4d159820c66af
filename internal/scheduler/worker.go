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
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/doctor"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/startstop"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// Handler works one run. Returning nil completes it (with the result set by
// Run.SetResult — or, if SetResult refused the last result it was given,
// fails the attempt with that refusal); Block(reason) blocks it;
// Snooze(delay) puts it back for delay without consuming the attempt; any other
// error fails the attempt, which is retried with backoff until its
// attempts are exhausted. A reason taken from the handler's text is stored
// by journal.SafeReason: escaped where the reason rule refuses it, and
// marked where it is cut.
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
	Timing lease.Timing
	// Mode is the heartbeat mode (SPEC §2); switch it at runtime with
	// SetMode. Defaults to keeper.ModeWriteBehind: every T_renew each held
	// run's wanted expiry advances in memory and one drain per T_drain
	// renews them all in one statement. keeper.ModeSync renews each run
	// with its own synchronous fenced UPDATE every T_renew (the baseline);
	// keeper.ModeDark does both, enforcing sync and counting differences.
	Mode keeper.Mode
	// ClockCheck is how long Start samples the store clock against this
	// process's monotonic clock (doctor.Sample, 11 probes) before it starts
	// in writebehind mode: Start refuses with a *doctor.SkewError when the
	// store clock's drift over a term or an observed step may exceed S
	// (SPEC §1), naming the figures. Defaults to 250ms; negative skips the
	// check (tests on a fake clock). Other modes do not check: their
	// synchronous renewals do not rely on the bound.
	ClockCheck time.Duration
	// Backoff spaces retries. Zero fields take runs.Backoff's defaults.
	Backoff runs.Backoff
	// MaxSnoozes bounds how often a run may snooze (Snooze) over its
	// life; past it a snooze fails the attempt instead. Defaults to
	// runs.DefaultMaxSnoozes (100); at most runs.MaxSnoozesLimit.
	MaxSnoozes int
	// FetchInterval is how long an idle queue waits before claiming again.
	// Defaults to 50ms.
	FetchInterval time.Duration
	// FetchCooldown is how long a queue waits, after a handler frees a
	// slot, before claiming again, so that one claim fills several freed
	// slots. Defaults to 1ms.
	FetchCooldown time.Duration
	// Manual: Start claims nothing by itself; the caller works runs one at
	// a time with WorkOne (worker_manual.go).
	Manual bool
	// Timeouts bounds a handler's run per queue (worker_stop.go): past it
	// the handler's context ends and, if it returns an error, the attempt
	// fails with the timeout as the reason. A queue not listed (or 0) has
	// none; negative is refused.
	Timeouts map[string]time.Duration

	// Clock defaults to the real clock (it drives heartbeats and polling).
	Clock clock.Clock
	// Runtime starts the worker's goroutines and makes its waits. Defaults
	// to rt.Real(Clock); the simulator runs the worker on its own.
	Runtime rt.Runtime
	// Rand draws the retry backoff's jitter in [0, 1). Defaults to
	// math/rand/v2.Float64; the simulator draws from its seed.
	Rand func() float64
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

var _ startstop.Service = (*Worker)(nil)

// Worker claims runs of its queues and works them with registered
// handlers, renewing each lease while its handler runs and cancelling the
// handler's context the moment the lease is lost.
type Worker struct {
	store    Store
	events   *EventCommitter
	cfg      WorkerConfig
	handlers map[string]Handler

	life   startstop.Lifecycle
	mu     sync.Mutex         // guards handlers
	cancel context.CancelFunc // stops fetching; set by Start, read by Stop
	// hctx is the parent of every handler context: Start's values,
	// never cancelled, so a run's context is not registered with (and,
	// when it ends, removed from) one parent shared by every run — a map
	// insert and delete under that parent's lock a run, contended by
	// every handler goroutine. Stop ends the handlers through the keeper,
	// which holds every run's cancel (cancelHandlers).
	hctx context.Context
	// handlersCancelled: cancelHandlers ran; a run whose work starts
	// after it is cancelled as it starts.
	handlersCancelled atomic.Bool
	fetch             sync.WaitGroup
	running           sync.WaitGroup
	wake              map[string]*rt.Signal // a slot of the queue freed: claim again
	rt                rt.Runtime

	completer *completer
	keeper    *keeper.Keeper
	// releasing is set when Stop's grace ran out: handlers cancelled from
	// then on release their runs (worker_stop.go) instead of failing them.
	releasing atomic.Bool
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
	if err := validateTimeouts(cfg.Timeouts); err != nil {
		return nil, err
	}
	if cfg.MaxSnoozes == 0 {
		cfg.MaxSnoozes = runs.DefaultMaxSnoozes
	}
	if err := runs.ValidateMaxSnoozes(cfg.MaxSnoozes); err != nil {
		return nil, err
	}
	if cfg.FetchInterval <= 0 {
		cfg.FetchInterval = 50 * time.Millisecond
	}
	if cfg.ClockCheck == 0 {
		cfg.ClockCheck = 250 * time.Millisecond
	}
	if cfg.FetchCooldown <= 0 {
		cfg.FetchCooldown = time.Millisecond
	}

	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Runtime == nil {
		cfg.Runtime = rt.Real(cfg.Clock)
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	w := &Worker{store: store, events: events, cfg: cfg, handlers: map[string]Handler{}, wake: map[string]*rt.Signal{}, rt: cfg.Runtime,
		completer: newCompleter(store, cfg.Clock, cfg.Runtime, 2*cfg.Timing.Drain, cfg.Logger)}
	w.life.Name = "worker " + cfg.Owner
	w.life.RT = cfg.Runtime
	k, err := keeper.New(keeper.Config{Kind: "runs", Timing: cfg.Timing, Mode: cfg.Mode, Clock: cfg.Clock, Runtime: cfg.Runtime, Logger: cfg.Logger,
		Flusher: keeper.FlusherFunc(w.flush)})
	if err != nil {
		return nil, err
	}
	w.keeper = k
	return w, nil
}

// flush is the keeper's drain: one RunRenewMany for every dirty lease.
func (w *Worker) flush(ctx context.Context, refs []keeper.Ref) ([]int, error) {
	p := &driver.RunRenewManyParams{Owner: w.cfg.Owner, Lease: w.cfg.Timing.Lease, Runs: make([]driver.RunLeaseRef, len(refs))}
	for i, r := range refs {
		p.Runs[i] = driver.RunLeaseRef{ID: r.ID, Fence: r.Fence}
	}
	sent := w.cfg.Clock.Now()
	res, err := w.store.RunRenewMany(ctx, p)
	if err != nil {
		return nil, err
	}
	w.keeper.ObserveStore(sent, w.cfg.Clock.Now(), res.StoreNow)
	return res.Lost, nil
}

// storeTime is the store time a claim or renewal wrote by: its expiry less
// T_lease (zero, which the clock watch ignores, when there is none).
func (w *Worker) storeTime(r *driver.Run) time.Time {
	if r == nil || r.ExpiresAt.IsZero() {
		return time.Time{}
	}
	return r.ExpiresAt.Add(-w.cfg.Timing.Lease)
}

// Mode returns the heartbeat mode.
func (w *Worker) Mode() keeper.Mode { return w.keeper.Mode() }

// SetMode switches the heartbeat mode at runtime (reversible): runs already
// held change over at their next renewal.
func (w *Worker) SetMode(m keeper.Mode) error { return w.keeper.SetMode(m) }

// Keeper returns the worker's lease keeper: its Stats and Prometheus
// Collector.
func (w *Worker) Keeper() *keeper.Keeper { return w.keeper }

// Owner returns the worker's owner id.
func (w *Worker) Owner() string { return w.cfg.Owner }

// Handle registers the handler of a queue. Call before Start.
func (w *Worker) Handle(queue string, h Handler) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handlers[queue] = h
}

// Start begins claiming runs on every configured queue. It is idempotent
// while the worker runs; after Stop it returns startstop.ErrStopped. In
// writebehind mode it first checks the store clock (see ClockCheck), with
// no lock held across that round trip.
func (w *Worker) Start(ctx context.Context) error {
	return w.life.Start(ctx, func(runCtx context.Context) error {
		w.mu.Lock()
		for q := range w.cfg.Queues {
			if w.handlers[q] == nil {
				w.mu.Unlock()
				return &journal.InputError{Field: "queues", Problem: fmt.Sprintf("queue %q has no handler", q)}
			}
		}
		w.mu.Unlock()
		if err := w.checkClock(runCtx); err != nil {
			return err
		}
		// Handlers outlive the Start context: Stop decides when they end.
		w.hctx = context.WithoutCancel(runCtx)
		if err := w.completer.b.Start(context.WithoutCancel(runCtx)); err != nil {
			return err
		}
		if err := w.keeper.Start(context.WithoutCancel(runCtx)); err != nil {
			_ = w.completer.b.Stop(context.Background()) // empty: nothing was claimed yet
			return err
		}
		var fctx context.Context
		fctx, w.cancel = context.WithCancel(runCtx)
		for q := range w.cfg.Queues {
			w.wake[q] = &rt.Signal{RT: w.rt}
		}
		for q, n := range w.cfg.Queues {
			if w.cfg.Manual {
				break
			}
			w.fetch.Add(1)
			w.life.Go("fetch "+q, func() { w.fetchLoop(fctx, q, n) })
		}
		return nil
	})
}

// Started is closed once the worker claims.
func (w *Worker) Started() <-chan struct{} { return w.life.Started() }

// Stopped is closed once the worker, its completer and keeper stopped.
func (w *Worker) Stopped() <-chan struct{} { return w.life.Stopped() }

// checkClock is write-behind start-up's clock check (see ClockCheck).
func (w *Worker) checkClock(ctx context.Context) error {
	if w.keeper.Mode() != keeper.ModeWriteBehind || w.cfg.ClockCheck < 0 {
		return nil
	}
	s, ok := w.store.(doctor.Sampler)
	if !ok {
		w.cfg.Logger.Warn("write-behind start-up: the store cannot tell its time; clock check skipped")
		return nil
	}
	const probes = 11
	ps, err := doctor.Sample(ctx, s, w.cfg.Clock, probes, w.cfg.ClockCheck/(probes-1))
	if err != nil {
		return fmt.Errorf("write-behind start-up: sampling the store clock: %w", err)
	}
	if err := doctor.Analyze(ps, w.cfg.Timing).CheckWriteBehind(w.cfg.Timing); err != nil {
		return fmt.Errorf("write-behind start-up refused (run `leasehold doctor`, or start in mode sync): %w", err)
	}
	return nil
}

// Stop stops claiming, waits for running handlers until ctx ends, then
// cancels their contexts and waits for them to return (a handler that
// ignores its context holds Stop). Then it stops the completer, which
// flushes once more, and the keeper, which drains once more, both within
// ctx's deadline. It is idempotent and returns ctx's error if the handlers
// had not returned by ctx's end.
func (w *Worker) Stop(ctx context.Context) error {
	return w.life.Stop(ctx, w.drain)
}

// drain is the worker's two-stage stop; it runs before the lifecycle
// cancels the fetch loops' context, so it cancels them itself first.
func (w *Worker) drain(ctx context.Context) error {
	w.cancel()
	w.fetch.Wait()
	done := make(chan struct{})
	go func() { w.running.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		// Past the deadline, the second stage: the handlers' contexts end
		// now, and each run whose handler gives up is released with a
		// fenced write (finish), so another worker claims it on its next
		// poll instead of after T_lease.
		w.releasing.Store(true)
		w.cancelHandlers()
		<-done
	}
	w.cancelHandlers()
	// Every handler has finished: the completer holds no caller, and the
	// keeper no entry still wanted.
	if cerr := w.completer.b.Stop(ctx); err == nil {
		err = cerr
	}
	if kerr := w.keeper.Stop(ctx); err == nil {
		err = kerr
	}
	return err
}

// cancelHandlers ends the context of every run being worked (cause
// context.Canceled), and of every run whose work starts from now on.
func (w *Worker) cancelHandlers() {
	w.handlersCancelled.Store(true) // before the keeper's lock: see work
	w.keeper.CancelHolders()
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
			if len(claimed) > 0 { // the store wrote expires_at = its now + T_lease
				w.keeper.ObserveStore(sent, w.cfg.Clock.Now(), w.storeTime(claimed[0]))
			}
			var beats *beatGroup // the claim's runs share one first-beat timer
			if len(claimed) > 0 {
				beats = w.newBeatGroup(sent, len(claimed))
			}
			for i, r := range claimed {
				slots <- struct{}{}
				w.running.Add(1)
				w.life.Go("run", func() {
					defer w.running.Done()
					defer func() {
						<-slots
						w.wake[queue].Notify() // a slot freed: claim again without waiting
					}()
					w.work(r, beats, i)
				})
			}
			if len(claimed) == free { // more may be waiting; claim again at once
				continue
			}
		}
		switch w.wake[queue].Wait(ctx, w.cfg.FetchInterval) {
		case rt.Done:
			return
		case rt.Fired:
			// Let a few more slots free up so one claim fills them all.
			if !rt.Sleep(w.rt, ctx, w.cfg.FetchCooldown) {
				return
			}
		}
	}
}

// work runs one claimed run, member i of its claim's beat group:
// heartbeat, handler, fenced final write.
func (w *Worker) work(row *driver.Run, beats *beatGroup, i int) {
	ctx, lost := context.WithCancelCause(w.hctx)
	defer lost(nil)
	e, err := w.keeper.Add(keeper.Ref{ID: row.ID, Fence: row.Fence}, beats.sent, lost)
	if err != nil { // a claim always carries a new fence: a bug if not
		w.cfg.Logger.Error("run claimed twice under one fence", "run", row.ID, "fence", row.Fence, "err", err)
		beats.leave(i)
		return
	}
	// After Add, under the keeper's lock: either cancelHandlers' pass saw
	// this entry, or this load sees its flag.
	if w.handlersCancelled.Load() {
		lost(nil)
	}
	defer w.keeper.Release(e)
	r := &Run{ID: row.ID, Queue: row.Queue, Payload: row.Payload, Attempt: row.Attempt, Fence: row.Fence,
		ctx: ctx, store: w.store, events: w.events, timing: w.cfg.Timing, lease: e, rt: w.rt}
	r.ownStream.rt = w.rt
	r.stream = &r.ownStream // one allocation with the handle
	beats.join(i, r)
	err = w.call(ctx, r)
	// Events emitted before returning belong to this attempt's outcome.
	if serr := r.Step(ctx); serr != nil && err == nil && ctx.Err() == nil {
		err = serr
	}
	// A holder the keeper stopped fails its attempt with the keeper's
	// reason (a self-stop's durable lag, the gate's shortfall), written
	// when the store is reachable; otherwise the reclaimer takes the run.
	// A handler that returned nil finished its work: its completion is a
	// fenced write like any other and stands if the fence is still current.
	if cause := context.Cause(ctx); err != nil && ctx.Err() != nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	r.cancelled = ctx.Err() != nil // before lost(nil), which ends ctx whatever happened
	lost(nil)                      // stops the heartbeat
	r.hb.stop(w, beats, i)
	e.Finishing() // a drain that finds the run gone now most likely met its completion
	w.finish(r, err)
}

// call runs the handler. A panic fails the attempt like an error, with
// its stack recorded in the reason (panicError) and logged in full, and
// never takes the worker down: the slot is freed and claiming goes on.
func (w *Worker) call(ctx context.Context, r *Run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			pe := newPanicError(p)
			w.cfg.Logger.Error("handler panicked", "run", r.ID, "fence", r.Fence, "panic", fmt.Sprint(p), "stack", string(pe.stack))
			err = pe
		}
	}()
	return w.callTimed(ctx, r)
}

// heartbeat advances the lease every T_renew, as the keeper's mode says:
// in memory for the drain (writebehind, dark) and with one synchronous
// fenced UPDATE (sync, dark). A refused synchronous renewal (fenced,
// expired, missing) means the lease is lost: the keeper cancels the run's
// context at once. A failed one is retried on the next tick: only the gate
// and the keeper's self-stop decide that the run must stop.
// next is when the first beat is due (lazyHeartbeat starts the loop then).
func (w *Worker) heartbeat(ctx context.Context, e *keeper.Entry, next time.Time) {
	c := w.cfg.Clock
	ref := e.Ref()
	for { // a fixed beat, as a ticker's
		if w.rt.Wait(ctx, nil, max(next.Sub(c.Now()), 0)) == rt.Done {
			return
		}
		next = next.Add(w.cfg.Timing.Renew)
		if now := c.Now(); next.Before(now) { // a late beat skips ticks rather than queueing them
			next = now
		}
		mode := w.keeper.Mode()
		if mode.Drains() {
			e.Renew()
		}
		if !mode.SyncRenews() {
			continue
		}
		sent := c.Now()
		row, err := w.store.RunRenew(ctx, &driver.RunRenewParams{ID: ref.ID, Fence: ref.Fence, Owner: w.cfg.Owner, Lease: w.cfg.Timing.Lease})
		switch {
		case err == nil:
			e.ConfirmSync(sent)
			w.keeper.ObserveStore(sent, c.Now(), w.storeTime(row))
		case errors.Is(err, lease.ErrFenced), errors.Is(err, lease.ErrLeaseExpired), errors.Is(err, lease.ErrNotFound):
			w.cfg.Logger.Warn("lease lost", "run", ref.ID, "fence", ref.Fence, "err", err)
			e.LoseSync(err)
			return
		case ctx.Err() != nil:
			return
		default:
			w.cfg.Logger.Warn("renewal failed; retrying next tick", "run", ref.ID, "err", err)
		}
	}
}

// finish writes the run's outcome, fenced. A fenced refusal means another
// holder owns the run now; the result is discarded, as the protocol wants.
//
// Every reason derived from handler text — its error, its Block reason, a
// recovered panic, the keeper's self-stop cause — goes through
// journal.SafeReason: what the reason rule refuses is escaped and a cut is
// marked, so the driver never refuses the final write for its reason and
// nothing the handler said is silently dropped.
//
// A handler that returned nil after SetResult refused its result (and did
// not set a good one since) fails its attempt with the refusal as the
// reason, as does a completion the completer refuses: completing without
// the result would report success while dropping what the handler meant
// to hand over, and the attempt's retry is safe (effects are idempotent).
//
// Every final write is bounded by 2 × T_drain. A completion's bound is the
// completer's wait (complete), so the common path makes no context.
func (w *Worker) finish(r *Run, herr error) {
	limit := w.cfg.Timing.Drain * 2
	var err error
	if herr == nil {
		r.mu.Lock()
		result, refused := r.result, r.resultErr
		r.mu.Unlock()
		herr = refused
		if herr == nil {
			err = w.completer.complete(limit, driver.RunCompletion{ID: r.ID, Fence: r.Fence, Result: result}, &r.out)
			if errors.Is(err, lease.ErrInvalid) { // refused, nothing written: fail the attempt instead
				herr, err = err, nil
			}
		}
	}
	if herr != nil {
		err = w.finishFailed(r, herr, limit)
	}
	if err != nil {
		refused := errors.Is(err, lease.ErrFenced) || errors.Is(err, lease.ErrLeaseExpired) || errors.Is(err, lease.ErrNotFound)
		r.lease.FinalFailed(refused, err) // counted here, not by a drain (keeper.Entry.Finishing)
		w.cfg.Logger.Warn("final write refused", "run", r.ID, "fence", r.Fence, "err", err)
	}
}

// finishFailed writes the outcome of an attempt that did not complete:
// released, snoozed, blocked or failed. It is finish's, apart so that
// the targets errors.As takes the address of (so they live on the heap)
// are made only for such an attempt, not for every completion.
func (w *Worker) finishFailed(r *Run, herr error, limit time.Duration) error {
	ctx, cancel := w.rt.WithTimeout(context.Background(), limit)
	defer cancel()
	var be *blockError
	var se *snoozeError
	switch {
	case w.releasing.Load() && r.cancelled && !errors.As(herr, &be):
		return w.release(ctx, r, herr)
	case errors.As(herr, &se):
		return w.snooze(ctx, r, se)
	case errors.As(herr, &be):
		_, err := w.store.RunBlock(ctx, &driver.RunBlockParams{ID: r.ID, Fence: r.Fence, Reason: journal.SafeReason(be.reason)})
		return err
	default:
		_, err := w.store.RunFail(ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, Reason: journal.SafeReason(herr.Error()),
			RetryAfter: w.cfg.Backoff.Delay(r.Attempt, w.cfg.Rand())})
		return err
	}
}
