package sim

import (
	"context"
	"errors"

	"github.com/anishathalye/porcupine"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
)

// runStore is the store of record as the shipped scheduler.Worker of one
// process sees it: every call goes through the simulated network on the
// calling thread (p.callCtx on the loop's current thread: latency, loss,
// store errors, partitions, the caller's simulated deadline) to the real
// SQLite driver. At the store side, as each call is applied, it records
// what only the store can see at that instant — the porcupine run history
// (history.go) and the oracle's checks of each accepted write (fence, no
// revival) — and, at the client side, which runs the process holds.
type runStore struct{ p *proc }

var _ scheduler.Store = (*runStore)(nil)

// via carries op through the network from the calling thread.
func (rs *runStore) via(ctx context.Context, name string, op func() error) error {
	p := rs.p
	return p.callCtx(p.s.loop.cur, name, ctx, p.s.knobs.CallTimeout, op)
}

func (rs *runStore) RunClaim(ctx context.Context, params *driver.RunClaimParams) ([]*driver.Run, error) {
	p, s := rs.p, rs.p.s
	var claimed []*driver.Run
	var ops []*porcupine.Operation
	sent := int64(s.loop.now)
	err := rs.via(ctx, "claim", func() error {
		var err error
		claimed, err = s.store.RunClaim(context.Background(), params)
		if err == nil {
			for _, r := range claimed {
				op := s.history.begin(p.id, runInput{run: r.ID, kind: opClaim})
				op.Call = sent
				s.history.applied(op, runOutput{ok: true, fence: r.Fence, state: r.State})
				ops = append(ops, op)
			}
		}
		return err
	})
	for _, op := range ops {
		s.history.answered(op, err == nil)
	}
	if err != nil {
		return nil, err
	}
	for _, r := range claimed {
		p.held[r.ID] = true
		s.loop.logf("%s holds run %d fence %d", p.owner, r.ID, r.Fence)
	}
	return claimed, nil
}

func (rs *runStore) RunRenew(ctx context.Context, params *driver.RunRenewParams) (*driver.Run, error) {
	p, s := rs.p, rs.p.s
	refs := []driver.RunLeaseRef{{ID: params.ID, Fence: params.Fence}}
	var r *driver.Run
	err := rs.via(ctx, "renew", func() error {
		before := s.oracle.beforeRenew(refs)
		var err error
		r, err = s.store.RunRenew(context.Background(), params)
		if err == nil {
			s.oracle.renewed(p, refs, &driver.RunRenewManyResult{Renewed: []int64{params.ID}}, before)
		}
		return err
	})
	return r, err
}

func (rs *runStore) RunRenewMany(ctx context.Context, params *driver.RunRenewManyParams) (*driver.RunRenewManyResult, error) {
	p, s := rs.p, rs.p.s
	var res *driver.RunRenewManyResult
	err := rs.via(ctx, "renew-many", func() error {
		before := s.oracle.beforeRenew(params.Runs)
		var err error
		res, err = s.store.RunRenewMany(context.Background(), params)
		if err == nil {
			s.oracle.renewed(p, params.Runs, res, before)
		}
		return err
	})
	return res, err
}

// final records a holder's final write of run id: a complete or a fail,
// with its history operation, and the run no longer held once answered.
func (rs *runStore) final(ctx context.Context, kind opKind, id, fence int64, write func() (*driver.Run, error)) (*driver.Run, error) {
	p, s := rs.p, rs.p.s
	op := s.history.begin(p.id, runInput{run: id, kind: kind, fence: fence})
	var r *driver.Run
	err := rs.via(ctx, kind.String(), func() error {
		var err error
		r, err = write()
		s.oracle.fencedWrite(p, kind.String(), id, fence, err)
		if transitionAnswer(err) {
			s.history.applied(op, outcome(r, err))
		}
		return err
	})
	s.history.answered(op, err != errTimeout)
	delete(p.held, id)
	s.loop.logf("%s %s run %d fence %d: %v", p.owner, kind, id, fence, err)
	return r, err
}

func (rs *runStore) RunComplete(ctx context.Context, params *driver.RunCompleteParams) (*driver.Run, error) {
	return rs.final(ctx, opComplete, params.ID, params.Fence, func() (*driver.Run, error) {
		return rs.p.s.store.RunComplete(context.Background(), params)
	})
}

func (rs *runStore) RunFail(ctx context.Context, params *driver.RunFailParams) (*driver.Run, error) {
	return rs.final(ctx, opFail, params.ID, params.Fence, func() (*driver.Run, error) {
		return rs.p.s.store.RunFail(context.Background(), params)
	})
}

// RunRelease is a worker's release at a stop past its grace: in the
// history it is a failed attempt's write (the run goes back to available
// under the same fence), which is what the model checks of it.
func (rs *runStore) RunRelease(ctx context.Context, params *driver.RunReleaseParams) (*driver.Run, error) {
	return rs.final(ctx, opFail, params.ID, params.Fence, func() (*driver.Run, error) {
		return rs.p.s.store.RunRelease(context.Background(), params)
	})
}

// RunCompleteMany is the completer's group commit: one history operation
// per completion, each accepted or refused (fenced) on its own.
func (rs *runStore) RunCompleteMany(ctx context.Context, params *driver.RunCompleteManyParams) (*driver.RunCompleteManyResult, error) {
	p, s := rs.p, rs.p.s
	ops := make([]*porcupine.Operation, len(params.Runs))
	for i, c := range params.Runs {
		ops[i] = s.history.begin(p.id, runInput{run: c.ID, kind: opComplete, fence: c.Fence})
	}
	var res *driver.RunCompleteManyResult
	err := rs.via(ctx, "complete-many", func() error {
		var err error
		res, err = s.store.RunCompleteMany(context.Background(), params)
		fenced := map[int]bool{}
		if err == nil {
			for _, i := range res.Fenced {
				fenced[i] = true
			}
		}
		if err != nil { // the batch refused as a whole changed no run: no transition
			return err
		}
		for i, c := range params.Runs {
			ok := !fenced[i]
			if ok {
				s.oracle.fencedWrite(p, "complete", c.ID, c.Fence, nil)
			}
			s.history.applied(ops[i], runOutput{ok: ok})
		}
		return nil
	})
	for i, c := range params.Runs {
		s.history.answered(ops[i], err != errTimeout)
		delete(p.held, c.ID)
		s.loop.logf("%s complete run %d fence %d (batch of %d): %v", p.owner, c.ID, c.Fence, len(params.Runs), err)
	}
	return res, err
}

func (rs *runStore) RunEffectBegin(ctx context.Context, params *driver.RunEffectParams) (*driver.Effect, error) {
	var eff *driver.Effect
	err := rs.via(ctx, "effect-begin", func() error {
		var err error
		eff, err = rs.p.s.store.RunEffectBegin(context.Background(), params)
		return err
	})
	return eff, err
}

func (rs *runStore) RunEffectCommit(ctx context.Context, params *driver.RunEffectCommitParams) (*driver.Effect, error) {
	p, s := rs.p, rs.p.s
	var eff *driver.Effect
	err := rs.via(ctx, "effect-commit", func() error {
		var err error
		eff, err = s.store.RunEffectCommit(context.Background(), params)
		s.oracle.fencedWrite(p, "effect-commit", params.RunID, params.Fence, err)
		return err
	})
	return eff, err
}

func (rs *runStore) RunEffectResolve(ctx context.Context, params *driver.RunEffectResolveParams) (*driver.Effect, error) {
	var eff *driver.Effect
	err := rs.via(ctx, "effect-resolve", func() error {
		var err error
		eff, err = rs.p.s.store.RunEffectResolve(context.Background(), params)
		return err
	})
	return eff, err
}

// RunEventAppend is the event committer's group commit; the oracle checks
// the fence of every event the store accepted.
func (rs *runStore) RunEventAppend(ctx context.Context, params *driver.RunEventAppendParams) (*driver.RunEventAppendResult, error) {
	p, s := rs.p, rs.p.s
	var res *driver.RunEventAppendResult
	err := rs.via(ctx, "events", func() error {
		var err error
		res, err = s.store.RunEventAppend(context.Background(), params)
		if err == nil {
			s.oracle.eventsWritten(p, params.Events, res.Fenced)
		}
		return err
	})
	return res, err
}

// errNotSimulated answers the calls the simulated handler never makes: a
// worker reaching one would be a change the simulator must learn first.
var errNotSimulated = errors.New("sim: this store call is not simulated")

func (rs *runStore) RunBlock(context.Context, *driver.RunBlockParams) (*driver.Run, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunTx(context.Context, *driver.RunTxParams, func(tx any) error) (*driver.RunTxResult, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunEnqueue(context.Context, *driver.RunEnqueueParams) ([]driver.RunEnqueued, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunEnqueueTx(context.Context, *driver.RunEnqueueTxParams) ([]driver.RunEnqueued, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunSnooze(context.Context, *driver.RunSnoozeParams) (*driver.Run, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunGet(context.Context, *driver.RunGetParams) (*driver.Run, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunUnblock(context.Context, *driver.RunUnblockParams) (*driver.Run, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunCancel(context.Context, *driver.RunCancelParams) (*driver.Run, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunRetry(context.Context, *driver.RunRetryParams) (*driver.Run, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunReclaim(context.Context, *driver.RunReclaimParams) (*driver.RunReclaimResult, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunEffectList(context.Context, *driver.RunEffectListParams) ([]*driver.Effect, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunEventList(context.Context, *driver.RunEventListParams) ([]*driver.RunEvent, error) {
	return nil, errNotSimulated
}
func (rs *runStore) RunEventListQueue(context.Context, *driver.RunEventListQueueParams) (*driver.QueueEventPage, error) {
	return nil, errNotSimulated
}

// transitionAnswer reports whether a write's answer is the run state
// machine's: accepted, or refused by the fence and state rule. A write
// refused for its input (ErrInvalid) never reached the rule and is no
// transition of the run, so the history leaves it out.
func transitionAnswer(err error) bool {
	return err == nil || errors.Is(err, driver.ErrFenced) || errors.Is(err, driver.ErrLeaseExpired) ||
		errors.Is(err, driver.ErrNotFound) || errors.Is(err, driver.ErrConflict)
}

// outcome is a fenced write's answer for the history: refused writes
// (ErrFenced) are answers too.
func outcome(r *driver.Run, err error) runOutput {
	if err != nil {
		return runOutput{ok: false}
	}
	return runOutput{ok: true, fence: r.Fence, state: r.State}
}
