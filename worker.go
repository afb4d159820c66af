package leasehold

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/handle"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// The worker and the run handle are the user's side of the engine in
// internal/scheduler: thin types that forward to it, so the root is the
// whole API a user reads (`go doc leasehold`) while the engine stays free
// to change.

// WorkerConfig configures a Worker. Zero values mean the defaults.
type WorkerConfig struct {
	// Owner identifies this worker in the runs it claims. Defaults to
	// "<hostname>-<pid>-<random>": a restarted worker is a new owner, and
	// the fence, not the owner, is what keeps it from writing as the old one.
	Owner string
	// Queues maps each queue to its concurrency limit. Required.
	Queues map[string]int
	// Timing is the run lease timing. Zero fields take lease.RunDefaults()
	// (T_lease 90s, T_renew 15s, T_drain 5s, D_stop 45s, S 15s, P 1s); the
	// result is validated.
	Timing lease.Timing
	// Mode is the heartbeat mode (SPEC §2). Defaults to ModeWriteBehind;
	// switch it at runtime with Worker.SetMode.
	Mode HeartbeatMode
	// ClockCheck is how long Start samples the store clock against this
	// process's monotonic clock before it starts in writebehind mode: Start
	// refuses when the store clock's drift over a term or an observed step
	// may exceed S, naming the figures. Defaults to 250ms; negative skips
	// the check (tests on a fake clock).
	ClockCheck time.Duration
	// Backoff spaces retries of failed runs. Zero fields take
	// runs.Backoff's defaults.
	Backoff runs.Backoff
	// MaxSnoozes bounds how often a run may snooze (Snooze) over its
	// life, so a handler cannot snooze forever silently: past it, a
	// snooze fails the attempt instead, with the limit as the reason.
	// Defaults to 100 (runs.DefaultMaxSnoozes); at most
	// runs.MaxSnoozesLimit; negative is refused (ErrInvalid).
	MaxSnoozes int
	// FetchInterval is how long an idle queue waits before claiming again.
	// Defaults to 50ms.
	FetchInterval time.Duration
	// FetchCooldown is how long a queue waits, after a handler frees a
	// slot, before claiming again, so that one claim fills several freed
	// slots. Defaults to 1ms.
	FetchCooldown time.Duration
	// Middleware wraps every handler of this worker, the first outermost
	// (logging, metrics, tracing: see Middleware).
	Middleware []Middleware
	// Timeouts bounds a handler per queue: past its queue's timeout the
	// handler's context ends, and an error it then returns fails the
	// attempt with a *TimeoutError as the reason (it matches
	// context.DeadlineExceeded). A queue not listed, or 0, has none;
	// negative is refused.
	Timeouts map[string]time.Duration
	// Manual makes Start claim nothing by itself: the caller works runs
	// one at a time with WorkOne (tests — see package leaseholdtest — and
	// tools that step a worker).
	Manual bool
	// Clock drives heartbeats and polling. Defaults to the client's.
	Clock clock.Clock
	// Logger defaults to the client's.
	Logger *slog.Logger
}

func (c WorkerConfig) internal() scheduler.WorkerConfig {
	return scheduler.WorkerConfig{Owner: c.Owner, Queues: c.Queues, Timing: c.Timing, Mode: keeper.Mode(c.Mode),
		ClockCheck: c.ClockCheck, Backoff: c.Backoff, MaxSnoozes: c.MaxSnoozes, FetchInterval: c.FetchInterval, FetchCooldown: c.FetchCooldown, Manual: c.Manual, Timeouts: c.Timeouts,
		Clock: c.Clock, Logger: c.Logger}
}

// HeartbeatMode is a worker's heartbeat mode (SPEC §2).
type HeartbeatMode int32

// The heartbeat modes. They roll out and back at runtime, same schema,
// both stores.
const (
	// ModeWriteBehind (the default): a renewal is an in-memory flag; one
	// drain per T_drain renews every held run in one statement; the gate
	// and the self-stop work from durably confirmed runway.
	ModeWriteBehind = HeartbeatMode(keeper.ModeWriteBehind)
	// ModeDark keeps the synchronous renewals authoritative while the
	// keeper also drains and counts what write-behind would have decided
	// differently.
	ModeDark = HeartbeatMode(keeper.ModeDark)
	// ModeSync renews each run with its own synchronous fenced UPDATE
	// every T_renew: the baseline.
	ModeSync = HeartbeatMode(keeper.ModeSync)
)

// String returns "writebehind", "dark" or "sync".
func (m HeartbeatMode) String() string { return keeper.Mode(m).String() }

// ParseHeartbeatMode parses "sync", "dark" or "writebehind".
func ParseHeartbeatMode(s string) (HeartbeatMode, error) {
	m, err := keeper.ParseMode(s)
	return HeartbeatMode(m), err
}

// Worker claims runs of its queues and works them with registered
// handlers, renewing each lease while its handler runs (write-behind by
// default) and cancelling the handler's context the moment the lease is
// lost. Create one with Client.NewWorker.
type Worker struct {
	w  *scheduler.Worker
	mw []Middleware
}

// Handler works one run. Returning nil completes it (fenced) with the
// result set by RunHandle.SetResult; Block(reason) parks it until
// Client.Unblock; Snooze(delay) puts it back for delay without consuming
// the attempt; any other error fails the attempt, retried with backoff
// until its attempts are spent. The context is cancelled when the lease is
// lost or the worker stops.
type Handler func(ctx context.Context, r *RunHandle) error

// Handle registers the handler of a queue. Register before Start.
func (w *Worker) Handle(queue string, h Handler) {
	h = chain(w.mw, h)
	w.w.Handle(queue, func(ctx context.Context, r *scheduler.Run) error {
		return h(ctx, &RunHandle{ID: r.ID, Queue: r.Queue, Payload: r.Payload, Attempt: r.Attempt, Fence: r.Fence, r: r})
	})
}

// Start checks the store clock (in writebehind mode) and starts claiming.
// It is idempotent; after Stop it fails with ErrClosed.
func (w *Worker) Start(ctx context.Context) error { return w.w.Start(ctx) }

// Stop is the two-stage graceful stop. First it stops claiming and lets
// running handlers finish until ctx's deadline (their outcomes are written
// as usual). Past the deadline it cancels the handlers still running; each
// that then gives up (returns an error) has its run released with one
// fenced write — available again at once, its attempt given back, its
// place in the queue kept — so another worker claims it on its next poll
// instead of waiting T_lease for the reclaimer. Then it flushes the
// completions and the last renewals and stops the keeper. It is
// idempotent; it returns ctx's error if the grace ran out.
func (w *Worker) Stop(ctx context.Context) error { return w.w.Stop(ctx) }

// Started is closed once the worker started.
func (w *Worker) Started() <-chan struct{} { return w.w.Started() }

// Stopped is closed once the worker stopped.
func (w *Worker) Stopped() <-chan struct{} { return w.w.Stopped() }

// Mode returns the heartbeat mode in force.
func (w *Worker) Mode() HeartbeatMode { return HeartbeatMode(w.w.Mode()) }

// SetMode switches the heartbeat mode at runtime.
func (w *Worker) SetMode(m HeartbeatMode) error { return w.w.SetMode(keeper.Mode(m)) }

// Owner is the owner id this worker claims runs under.
func (w *Worker) Owner() string { return w.w.Owner() }

// WorkerStats are a worker's keeper counters: renewals, drains, flushed
// rows, leases lost, self-stops, gate passes and refusals, and in dark mode
// the differences between the two ways of deciding.
type WorkerStats struct {
	Flushes       uint64 // drains that reached the store and were answered
	FlushErrors   uint64 // drains that failed (retried with backoff)
	FlushedRows   uint64 // leases renewed by drains
	Lost          uint64 // leases found lost by a flush or a refused renewal
	SelfStops     uint64 // holders stopped at D_stop
	GatePass      uint64 // gate passed locally, no store call
	GateFlushPass uint64 // gate passed after one synchronous flush
	GateRefuse    uint64 // gate refused (ErrLeaseRunway); holder stopped
	DarkGateDiffs uint64 // dark mode: gate decisions write-behind would have made otherwise
	DarkStopDiffs uint64 // dark mode: self-stop decisions that would have differed
	DarkLostDiffs uint64 // dark mode: leases the drain found lost before the sync path
	// MaxLag is the largest durable lag a lease had reached when a renewal
	// of it was confirmed: how close upkeep came to D_stop.
	MaxLag time.Duration
}

// Collector returns the worker's Prometheus collector: its keeper's
// decisions, heartbeat mode and switches, and the runtime store-clock
// watch (leasehold_keeper_*, leasehold_gate_*, leasehold_store_clock_*).
// Register it once; for several workers in one registry, wrap each with a
// distinguishing label (prometheus.WrapRegistererWith).
func (w *Worker) Collector() prometheus.Collector { return w.w.Keeper().Collector() }

// ClockCut is how much the worker's runway is shortened now, beyond S,
// because the store clock was seen moving beyond S within the last term
// (0 normally; see docs/design/fencing.md §6).
func (w *Worker) ClockCut() time.Duration { return w.w.Keeper().ClockCut() }

// Stats returns the worker's keeper counters.
func (w *Worker) Stats() WorkerStats { return WorkerStats(w.w.Keeper().Stats()) }

// RunHandle is a handler's handle on the run it holds: its row's identity
// and payload, and the fenced operations (Effect, Tx, Emit, Step, Gate).
type RunHandle struct {
	ID      int64
	Queue   string
	Payload []byte // JSON, compact
	Attempt int    // 1 on the first attempt
	Fence   int64  // the lease's fence: every write of this handle carries it

	r handle.Ops // *scheduler.Run in process; the remote worker's run over HTTP
}

func init() {
	handle.New = func(r handle.Run, ops handle.Ops) any {
		return &RunHandle{ID: r.ID, Queue: r.Queue, Payload: r.Payload, Attempt: r.Attempt, Fence: r.Fence, r: ops}
	}
}

// EffectToken is handed to an effect function for use downstream: a
// downstream store that remembers the highest Fence it has seen per
// IdempotencyKey and rejects lower ones is the only full protection against
// a holder that paused past its lease.
type EffectToken struct {
	Fence          int64
	IdempotencyKey string // "<run id>:<key>", stable across attempts
}

// Context is cancelled when the lease is lost or the worker stops.
func (h *RunHandle) Context() context.Context { return h.r.Context() }

// SetResult records the JSON result written when the handler returns nil.
// A result the store would refuse (not JSON, over 64 KiB compact) is
// refused here, typed (ErrInvalid), and the previous result kept; a handler
// that returns nil after such a refusal fails its attempt with the refusal
// as the reason, so the run is never left running nor completed without
// what the handler meant to hand over.
func (h *RunHandle) SetResult(result []byte) error { return h.r.SetResult(result) }

// Gate is the side-effect gate (SPEC §2): nil when the run's durably
// confirmed lease runway covers an effect of at most maxDur plus the
// margin, with no store call; short of that, one synchronous renewal is
// tried, and if still short it returns a *RunwayError (ErrLeaseRunway) and
// the run stops. Effect and Tx call it; call it directly before a side
// effect of your own.
func (h *RunHandle) Gate(ctx context.Context, maxDur time.Duration) error {
	return h.r.Gate(ctx, maxDur)
}

// Effect performs an idempotent side effect at most once per (run, key): a
// committed result is returned without calling fn; otherwise the gate must
// pass for maxDur, the intent is recorded under this run's fence, fn is
// called once with a context bounded by maxDur and the lease, and its
// result committed. An intent found without a commit (an earlier attempt
// may or may not have acted) is an *UncertainEffectError (ErrUncertain):
// fn is not called; reconcile with the downstream system and call
// ResolveEffect. maxDur must fit the lease (ErrEffectDuration otherwise).
func (h *RunHandle) Effect(ctx context.Context, key string, maxDur time.Duration,
	fn func(ctx context.Context, tok EffectToken) ([]byte, error)) ([]byte, error) {
	return h.r.Effect(ctx, key, maxDur, func(ctx context.Context, tok scheduler.EffectToken) ([]byte, error) {
		return fn(ctx, EffectToken(tok))
	})
}

// ResolveEffect settles an uncertain effect after reconciling it: happened
// records it as committed with result; otherwise the next Effect with that
// key runs it again. Reconcile by asking the downstream system with the
// idempotency key and this run's fence, and have it refuse lower tokens for
// that key from then on.
func (h *RunHandle) ResolveEffect(ctx context.Context, key string, happened bool, result []byte) error {
	return h.r.ResolveEffect(ctx, key, happened, result)
}

// Tx runs fn — the caller's own writes to the same database — in one
// transaction with a locking fence check of this run and the commit of
// effect key: exactly once, never uncertain. tx is a pgx.Tx on Postgres
// and a *sql.Tx on SQLite. A key already committed returns nil without
// calling fn.
func (h *RunHandle) Tx(ctx context.Context, key string, fn func(tx any) error) error {
	return h.r.Tx(ctx, key, fn)
}

// Emit appends an event to the run's ordered log; it returns once the
// event is queued for the group committer (blocking while its buffer is
// full). Step waits until it is durable. After an event of this run was
// refused for its fence, Emit returns ErrFenced.
func (h *RunHandle) Emit(ctx context.Context, kind string, payload []byte) error {
	return h.r.Emit(ctx, kind, payload)
}

// Step returns once every event emitted so far is durable, or ErrFenced if
// the run is no longer held.
func (h *RunHandle) Step(ctx context.Context) error { return h.r.Step(ctx) }

// Block is returned by a handler to park its run until Client.Unblock; the
// lease is released.
func Block(reason string) error { return scheduler.Block(reason) }

// Snooze is returned by a handler to put its run back to available after
// delay without consuming an attempt: the lease is released (a fenced
// write, refused like a completion once the run was reclaimed or
// cancelled) and the next claim works the same attempt again. A run
// snoozes at most WorkerConfig.MaxSnoozes times (default 100) over its
// life; past that the snooze fails the attempt instead, with the limit as
// the reason. A delay outside 0..runs.MaxDelay (a year) is refused: the
// returned error matches ErrInvalid, and returned from a handler it fails
// the attempt with that refusal as the reason.
//
//	if rateLimited {
//		return leasehold.Snooze(30 * time.Second)
//	}
func Snooze(delay time.Duration) error { return scheduler.Snooze(delay) }

// RunwayError is the side-effect gate's refusal (it matches
// ErrLeaseRunway): the effect needed Needed of durable runway and
// Available was left after one synchronous flush.
type RunwayError = lease.RunwayError

// LostError says why a run's lease was given up (it matches ErrLeaseLost):
// SelfStop when the durable lag reached D_stop (Lag), else the store's
// refusal of a renewal (Cause).
type LostError = lease.LostError

// EffectResultError is an effect that happened but whose result was
// refused (not JSON, over 64 KiB compact…): the effect is recorded as done
// with the refusal, so a retry returns this same error without calling fn
// again and never reports it uncertain. It matches ErrInvalid.
type EffectResultError = runs.EffectResultError

// UncertainEffectError is an effect whose intent exists without a commit
// (it matches ErrUncertain): Key, RunID and the IntentFence it was made
// under.
type UncertainEffectError = runs.UncertainEffectError
