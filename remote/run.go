package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/internal/handle"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// run is one held run of the remote worker: the handle.Ops behind the
// handler's *leasehold.RunHandle, every call an API call under the fence.
type run struct {
	w      *Worker
	l      Lease
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	deadline time.Time // send of the last answered claim or renewal + its runway
	sent     time.Time // that send
	result   []byte
	resErr   error
	seq      int64 // the last event's seq under this fence
	fenced   error // set when a write was refused for the fence
}

var _ handle.Ops = (*run)(nil)

func (r *run) ref() lease.Ref { return lease.Ref{ID: r.l.ID, Fence: r.l.Fence} }

func (r *run) Context() context.Context { return r.ctx }

func (r *run) getDeadline() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.deadline
}

// extend moves the deadline to d if d is later: answers may arrive out of
// order, and an older send must not shorten a newer one's deadline.
func (r *run) extend(sent, d time.Time) {
	r.mu.Lock()
	if d.After(r.deadline) {
		r.deadline, r.sent = d, sent
	}
	r.mu.Unlock()
}

// lag is the time since the send of the last answered claim or renewal.
func (r *run) lag() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.sent)
}

// SetResult checks the result as the store would (JSON, at most 64 KiB
// compact) and keeps it for the completion.
func (r *run) SetResult(result []byte) error {
	n, err := runs.NormalizePayload("result", result)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.resErr = err
		return err
	}
	r.result, r.resErr = n, nil
	return nil
}

// Gate is a local check against the deadline this worker holds, with one
// renewal when short. The server's gate (run by Effect, with D_stop and
// the margin) is the one that decides for Effect; call Gate before a side
// effect of your own.
func (r *run) Gate(ctx context.Context, maxDur time.Duration) error {
	if time.Until(r.getDeadline()) >= maxDur {
		return nil
	}
	if ren, err := r.w.cfg.Client.Renew(ctx, r.l.ID, r.l.Fence, r.w.owner); err == nil {
		r.extend(ren.Sent, ren.Deadline)
	} else if lostErr(err) {
		r.lose(err)
		return err
	}
	if avail := time.Until(r.getDeadline()); avail < maxDur {
		return &lease.RunwayError{Ref: r.ref(), Needed: maxDur, Available: max(avail, 0)}
	}
	return nil
}

// Effect runs fn at most once per (run, key), as the in-process worker's:
// the server's gate and the intent (effects/begin), fn with a context
// bounded by maxDur and by the deadline the server vouched for, then the
// commit. An intent without a commit is an *UncertainEffectError.
func (r *run) Effect(ctx context.Context, key string, maxDur time.Duration,
	fn func(ctx context.Context, tok scheduler.EffectToken) ([]byte, error)) ([]byte, error) {
	c := r.w.cfg.Client
	st, err := c.EffectBegin(ctx, r.l.ID, r.l.Fence, r.w.owner, key, maxDur)
	if err != nil {
		if p, ok := AsProblem(err); ok && p.Kind() == "uncertain" {
			return nil, &runs.UncertainEffectError{RunID: r.l.ID, Key: key, IntentFence: p.IntentFence}
		}
		if lostErr(err) {
			r.lose(err)
		}
		return nil, fmt.Errorf("effect %q of run %d: %w", key, r.l.ID, err)
	}
	if st.Outcome == "committed" {
		return st.Effect.Result, nil
	}
	fctx, cancel := context.WithDeadline(ctx, minTime(st.Deadline, time.Now().Add(maxDur)))
	defer cancel()
	stop := context.AfterFunc(r.ctx, cancel) // the lease's end ends the effect too
	defer stop()
	result, err := fn(fctx, scheduler.EffectToken{Fence: r.l.Fence, IdempotencyKey: st.IdempotencyKey})
	if err != nil {
		return nil, fmt.Errorf("effect %q: %w", key, err)
	}
	if result != nil {
		if result, err = runs.NormalizePayload("result", result); err != nil {
			return nil, fmt.Errorf("effect %q: %w", key, err)
		}
	}
	// The effect happened: its commit is sent even when the handler's
	// context ended meanwhile (the lease's deadline passed during fn) —
	// the store's fence, not this process's view, decides whether it
	// counts, and an intent left without it would read as uncertain.
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer ccancel()
	if err := c.EffectCommit(cctx, r.l.ID, r.l.Fence, key, result); err != nil {
		if lostErr(err) {
			r.lose(err)
		}
		return nil, fmt.Errorf("committing effect %q: %w", key, err)
	}
	return result, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// ResolveEffect settles an uncertain effect (see leasehold.RunHandle).
func (r *run) ResolveEffect(ctx context.Context, key string, happened bool, result []byte) error {
	return r.w.cfg.Client.EffectResolve(ctx, r.l.ID, r.l.Fence, key, happened, result)
}

// errNoTx is Tx's answer: the caller's transaction must be the store's.
var errNoTx = fmt.Errorf("remote: RunHandle.Tx needs the store's own transaction, which a remote worker has not; use Effect: %w", leasehold.ErrInvalid)

func (r *run) Tx(context.Context, string, func(tx any) error) error { return errNoTx }

// Emit sends one event, durable when it returns (so Step has nothing to
// wait for). After a refusal for the fence it returns ErrFenced.
func (r *run) Emit(ctx context.Context, kind string, payload []byte) error {
	r.mu.Lock()
	if r.fenced != nil {
		err := r.fenced
		r.mu.Unlock()
		return err
	}
	r.seq++
	seq := r.seq
	r.mu.Unlock()
	err := r.w.cfg.Client.Emit(ctx, r.l.ID, r.l.Fence, Event{Seq: seq, Kind: kind, Payload: payload})
	if err != nil && lostErr(err) {
		r.mu.Lock()
		r.fenced = err
		r.mu.Unlock()
		r.lose(err)
	}
	return err
}

// Step returns ErrFenced once an event was refused; every Emit is durable
// already.
func (r *run) Step(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fenced
}

// lose cancels the handler: the lease is gone.
func (r *run) lose(cause error) {
	r.cancel(&lease.LostError{Ref: r.ref(), Lag: r.lag(), Cause: cause})
}

// lostErr: the store refused for the fence or the lease — retrying cannot
// help.
func lostErr(err error) bool {
	return errors.Is(err, leasehold.ErrFenced) || errors.Is(err, leasehold.ErrLeaseLost) || errors.Is(err, leasehold.ErrNotFound)
}
