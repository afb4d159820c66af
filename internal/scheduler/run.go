package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// Store is what a worker needs of a driver.
type Store interface {
	driver.RunStore
	driver.RunReleaser
	driver.EffectStore
}

// ErrUncertain is lease.ErrUncertain.
var ErrUncertain = lease.ErrUncertain

// The effect errors are defined in package runs, so a user matches them
// from the public API.
type (
	// UncertainEffectError names an uncertain effect (runs.UncertainEffectError).
	UncertainEffectError = runs.UncertainEffectError
	// EffectResultError is an effect that happened with a refused result
	// (runs.EffectResultError).
	EffectResultError = runs.EffectResultError
)

// EffectToken is handed to an effect function for use downstream: a
// downstream store that remembers the highest Fence it has seen per
// IdempotencyKey and rejects lower ones is the only full protection against a
// holder that paused past its lease.
type EffectToken struct {
	Fence          int64
	IdempotencyKey string // "<run id>:<key>", stable across attempts
}

// Run is a handler's handle on the run it holds. Its Context is cancelled
// the moment the lease is lost (or the worker stops).
type Run struct {
	ID      int64
	Queue   string
	Payload []byte
	Attempt int
	Fence   int64

	ctx context.Context
	// cancelled: the handler's context had ended when it returned (read
	// before the worker ends it): only such a run is released by a Stop
	// past its grace; one that failed on its own fails its attempt.
	cancelled bool
	store     Store
	events    *EventCommitter
	stream    *eventStream
	timing    lease.Timing
	lease     *keeper.Entry
	rt        rt.Runtime
	hb        lazyHeartbeat // the worker's, for this run
	// ownStream is stream for a worker's run (newEventStream's, made with
	// the handle rather than apart).
	ownStream eventStream
	// out is the answer of the run's completion (completer.complete),
	// made with the handle rather than apart.
	out outcome

	mu        sync.Mutex
	result    []byte // compact JSON or nil, set by SetResult
	resultErr error  // SetResult's last refusal, cleared by a good result
}

// Context is cancelled when the lease is lost or the worker stops.
func (r *Run) Context() context.Context { return r.ctx }

// SetResult sets the result written when the handler returns nil: JSON of
// at most runs.MaxPayloadBytes in compact form (it is stored compact), or
// nil for none. A result that breaks that rule is refused here with a
// *journal.InputError (errors.Is lease.ErrInvalid) and the run's result
// stays as it was; a handler that returns nil without setting a good
// result since fails its attempt with the refusal as the reason, rather
// than completing without the result it meant to hand over.
func (r *Run) SetResult(result []byte) error {
	var err error
	if len(result) == 0 {
		result = nil // none, as the driver's rule reads an empty result
	} else {
		result, err = runs.NormalizePayload("result", result)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.resultErr = fmt.Errorf("result refused by SetResult: %w", err)
		return err
	}
	r.result, r.resultErr = result, nil
	return nil
}

// refusedResultKey is the one key of the JSON object committed in place of
// a refused effect result: {"leasehold:result_refused":"<problem>"}. The
// ledger's result column holds JSON, so the marker needs no new column and
// reads back alike on both stores; an fn result of exactly that shape is
// itself refused (the key is reserved), so a marker always means a refusal.
const refusedResultKey = "leasehold:result_refused"

// refusedResult returns the marker recording problem.
func refusedResult(problem string) []byte {
	b, err := json.Marshal(map[string]string{refusedResultKey: problem})
	if err != nil {
		panic(err) // unreachable: a map of strings always marshals
	}
	return b
}

// refusedProblem reports whether a stored result is the refusal marker,
// and its problem.
func refusedProblem(result []byte) (string, bool) {
	if !bytes.Contains(result, []byte(refusedResultKey)) {
		return "", false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil || len(m) != 1 {
		return "", false
	}
	raw, ok := m[refusedResultKey]
	var problem string
	if !ok || json.Unmarshal(raw, &problem) != nil {
		return "", false
	}
	return problem, true
}

// Gate is the side-effect gate (SPEC §2): nil when the run's durably
// confirmed lease runway covers an effect of at most maxDur plus the
// margin, with no store call; short of that, one synchronous renewal is
// tried, and if still short it returns lease.ErrLeaseRunway (a
// *keeper.RunwayError) and the run stops. Effect and Tx call it; call it
// directly before a side effect of your own.
func (r *Run) Gate(ctx context.Context, maxDur time.Duration) error {
	return r.lease.Gate(ctx, maxDur)
}

// Effect performs an idempotent side effect at most once per (run, key):
// a committed result is returned without calling fn; otherwise the gate
// must pass for maxDur, the intent is recorded under this run's fence, fn
// is called once with a context bounded by maxDur and the run's lease, and
// its result committed. If an intent exists without a commit, Effect
// returns *UncertainEffectError and does not call fn. maxDur must fit the
// lease (lease.Timing.CheckEffect).
//
// The result contract: fn's result is JSON of at most runs.MaxPayloadBytes
// (64 KiB) in compact form — valid UTF-8, no byte-order mark, nested at
// most journal.MaxPayloadDepth (64) deep — or nil for none; it is stored
// and returned compact (docs/LIMITS.md has every limit).
// A result that breaks it does not undo the effect, which happened: the
// effect is committed as done with a marker of the refusal in place of the
// result ({"leasehold:result_refused":"<problem>"}, a JSON object whose
// key is reserved), and Effect returns an *EffectResultError (errors.Is
// lease.ErrInvalid) — now and from every later Effect with the key, which
// does not call fn again and never reports the effect uncertain.
//
// The gate comes before the intent: a refusal then leaves nothing behind,
// where a refusal after it would leave an intent that was never acted on
// and that the next holder would have to treat as uncertain. It is asked
// again after the intent, immediately before fn, since the intent's round
// trip may outlast the margin (a gap found while writing the simulator).
func (r *Run) Effect(ctx context.Context, key string, maxDur time.Duration,
	fn func(ctx context.Context, tok EffectToken) ([]byte, error)) ([]byte, error) {
	if err := r.timing.CheckEffect(maxDur); err != nil {
		return nil, err
	}
	if err := r.Gate(ctx, maxDur); err != nil {
		return nil, fmt.Errorf("effect %q of run %d: %w", key, r.ID, err)
	}
	eff, err := r.store.RunEffectBegin(ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: key})
	if err != nil {
		return nil, err
	}
	switch eff.Outcome {
	case driver.EffectCommitted:
		if problem, refused := refusedProblem(eff.Result); refused {
			return nil, &EffectResultError{RunID: r.ID, Key: key, Problem: problem}
		}
		return eff.Result, nil
	case driver.EffectUncertain:
		return nil, &UncertainEffectError{RunID: r.ID, Key: key, IntentFence: eff.Fence}
	}
	// The gate again, at the last moment: the intent's round trip may have
	// taken longer than the margin allows for (a slow or stalled store),
	// and the gate's promise holds only from its own check. A refusal here
	// leaves the intent without a commit — uncertain for the next holder,
	// which is safe: the effect was not started.
	if err := r.Gate(ctx, maxDur); err != nil {
		return nil, fmt.Errorf("effect %q of run %d, after its intent: %w", key, r.ID, err)
	}
	mctx, unmerge := mergeDone(r.rt, ctx, r.ctx)
	defer unmerge()
	fctx, cancel := r.rt.WithTimeout(mctx, maxDur)
	defer cancel()
	result, err := fn(fctx, EffectToken{Fence: r.Fence, IdempotencyKey: fmt.Sprintf("%d:%s", r.ID, key)})
	if err != nil {
		return nil, fmt.Errorf("effect %q: %w", key, err)
	}
	// fn succeeded: the effect happened, whatever the shape of its result.
	// A result the ledger cannot hold is refused here, before the commit,
	// and the effect committed with the refusal marker in its place: left
	// uncommitted it would read as uncertain, and be reconciled or run
	// again, for a side effect that is known to have happened.
	var refused *EffectResultError
	if result != nil {
		n, nerr := runs.NormalizePayload("result", result)
		if nerr == nil {
			if _, reserved := refusedProblem(n); reserved {
				nerr = &journal.InputError{Field: "result",
					Problem: fmt.Sprintf("an object whose one key is %q is reserved for a refused result", refusedResultKey)}
			}
		}
		result = n
		if nerr != nil {
			refused = &EffectResultError{RunID: r.ID, Key: key, Problem: nerr.Error()}
			result = refusedResult(refused.Problem)
		}
	}
	if _, err := r.store.RunEffectCommit(ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: key, Result: result}); err != nil {
		return nil, fmt.Errorf("committing effect %q: %w", key, err)
	}
	if refused != nil {
		return nil, refused
	}
	return result, nil
}

// ResolveEffect settles an uncertain effect after reconciling it: happened
// records it as committed with result; otherwise the next Effect with that
// key runs it again.
//
// Reconcile by asking the downstream system with the idempotency key AND
// this run's fence (EffectToken.Fence), and have it refuse lower tokens for
// that key from then on: otherwise a holder that paused before its call
// could still be accepted after you found nothing and ran the effect
// yourself (model/README.md, limit-zombie-double; internal/witness
// Reconcile shows the downstream side).
func (r *Run) ResolveEffect(ctx context.Context, key string, happened bool, result []byte) error {
	_, err := r.store.RunEffectResolve(ctx, &driver.RunEffectResolveParams{RunID: r.ID, Fence: r.Fence, Key: key,
		Committed: happened, Result: result})
	return err
}

// Tx runs fn — the caller's own writes to the same database — in one
// transaction with a locking fence check of this run and the commit of
// effect key: exactly once, never uncertain. tx is a pgx.Tx on Postgres and
// a *sql.Tx on SQLite. A key already committed returns nil without calling fn.
// The gate must pass first (with no declared duration: the margin only),
// though the fence check inside the transaction is what makes it safe.
func (r *Run) Tx(ctx context.Context, key string, fn func(tx any) error) error {
	if err := r.Gate(ctx, 0); err != nil {
		return fmt.Errorf("tx %q of run %d: %w", key, r.ID, err)
	}
	_, err := r.store.RunTx(ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: key}, fn)
	return err
}

// Emit appends an event to the run's ordered log. It returns once the event
// is queued for the group committer (blocking while its buffer is full);
// Step waits until it is durable. After an event of this run was refused
// for its fence, Emit returns ErrFenced. An Emit that could not queue its
// event (ctx ended while the buffer was full, or the committer stopped)
// fails the run's later Emits and Steps with the same error: the event is
// never silently dropped behind an acknowledgement.
func (r *Run) Emit(ctx context.Context, kind string, payload []byte) error {
	if err := journal.ValidateID("kind", kind); err != nil {
		return err
	}
	p, err := journal.NormalizePayload(payload)
	if err != nil {
		return err
	}
	seq, err := r.stream.next()
	if err != nil {
		return fmt.Errorf("emit to run %d under fence %d: %w", r.ID, r.Fence, err)
	}
	if err := r.events.add(ctx, eventItem{ev: driver.RunEventInsert{RunID: r.ID, Fence: r.Fence, Seq: seq, Kind: kind, Payload: p}, s: r.stream}); err != nil {
		// The sequence number is taken but the event was never queued: the
		// stream can no longer become durable up to it, so Step reports
		// the failure instead of waiting for an event that will not come.
		err = fmt.Errorf("emit to run %d under fence %d: %w", r.ID, r.Fence, err)
		r.stream.fail(err)
		return err
	}
	return nil
}

// Step returns once every event emitted so far is durable, or ErrFenced if
// the run's events were refused because it is no longer held.
func (r *Run) Step(ctx context.Context) error {
	if err := r.stream.wait(ctx); err != nil {
		return fmt.Errorf("step of run %d under fence %d: %w", r.ID, r.Fence, err)
	}
	return nil
}

// mergeDone returns a context with a's values that is also done when b
// is, and the cancel that releases it (and its watch on b).
func mergeDone(r rt.Runtime, a, b context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(a)
	stop := r.AfterFunc(b, func() { cancel(context.Cause(b)) })
	return ctx, func() { stop(); cancel(context.Canceled) }
}

// blockError asks the worker to block the run.
type blockError struct{ reason string }

func (e *blockError) Error() string { return "block: " + e.reason }

// Block is returned by a handler to park its run until an external signal
// (Unblock); the lease is released. The reason is stored through
// journal.SafeReason (escaped, never cut without a marker).
func Block(reason string) error { return &blockError{reason: reason} }

// AsBlock reports whether a handler's error asks to block its run, and
// why: for workers other than this package's (the remote worker).
func AsBlock(err error) (reason string, ok bool) {
	var be *blockError
	if errors.As(err, &be) {
		return be.reason, true
	}
	return "", false
}
