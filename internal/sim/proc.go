package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// proc is one worker process. A crash ends its generation: every thread of
// it unwinds, its keeper and contexts are dropped; a restart is a new
// owner with a new keeper, as a restarted worker is.
type proc struct {
	s     *Sim
	id    int
	gen   int
	up    bool
	owner string
	clock *simClock
	k     *keeper.Keeper
	ctx   context.Context
	stop  context.CancelFunc

	threads     []*thread
	held        map[int64]bool // runs held by this generation
	pausedUntil time.Duration  // unused by faults today; the loop honours it
	partUntil   time.Duration  // partitioned from the store until then
	lastFault   time.Duration  // last call that failed, was lost or slow
}

func (p *proc) partitioned() bool { return p.partUntil > p.s.loop.now }

// noteFault records that this process could not count on the store just
// now: "no live holder is reclaimed" is only claimed for holders that had
// none for a whole term.
func (p *proc) noteFault() { p.lastFault = max(p.lastFault, p.s.loop.now) }

// pause stops every thread of p for a while (SIGSTOP, a long GC, a
// descheduled VM). Half the pauses are aimed at the edge that matters: they
// end just after the earliest lease p holds expires on the store clock,
// within the reclaimer's poll, when the lease is expired but not yet
// reclaimed — where a renewal must be refused and no effect may start.
func (p *proc) pause(why string) {
	s, l := p.s, p.s.loop
	d := time.Duration(l.rng.Float64() * float64(s.knobs.PauseMax))
	if l.rng.IntN(2) == 0 {
		now := s.storeClock.Now()
		// The minimum over a map: written so that the visiting order (Go
		// randomizes it) cannot change the result, or the seed would not
		// replay — a negative "left" once doubled as "none yet".
		var earliest time.Duration
		found := false
		for id := range p.held {
			if r := s.oracle.row(id); r.State == runs.StateRunning && r.Owner == p.owner {
				if left := r.ExpiresAt.Sub(now); !found || left < earliest {
					earliest, found = left, true
				}
			}
		}
		if found {
			d = max(earliest, 0) + time.Duration(l.rng.Int64N(int64(s.knobs.Timing.Poll+s.knobs.ReclaimLagMax)+1))
		}
	}
	s.pauses++
	l.logf("%s paused for %v %s", p.owner, d.Round(time.Millisecond), why)
	p.pausedUntil = max(p.pausedUntil, l.now+d)
	p.lastFault = max(p.lastFault, p.pausedUntil)
}

// start begins a new generation: a fresh owner, keeper and threads.
func (p *proc) start() {
	s := p.s
	p.gen++
	p.up = true
	p.owner = fmt.Sprintf("w%d.%d", p.id, p.gen)
	p.held = map[int64]bool{}
	p.threads = nil
	p.lastFault = s.loop.now
	p.ctx, p.stop = context.WithCancel(context.Background())
	k, err := keeper.New(keeper.Config{Timing: s.knobs.Timing, Mode: s.knobs.Mode, Clock: p.clock,
		Logger: slog.New(slog.DiscardHandler), WatchEvery: min(time.Second, s.knobs.Timing.Stop/8),
		Flusher: keeper.FlusherFunc(p.flush)})
	if err != nil {
		panic(err) // the knobs are validated
	}
	p.k = k
	s.loop.logf("%s starts", p.owner)
	s.loop.spawn(p, p.owner+" fetch", p.fetchLoop)
	s.loop.spawn(p, p.owner+" drain", p.drainLoop)
	s.loop.spawn(p, p.owner+" watch", p.watchLoop)
	s.loop.spawn(p, p.owner+" world", p.worldLoop)
}

// crash ends the generation at once: no more steps, no goodbye writes.
// Requests already in flight may still land at the store.
func (p *proc) crash() {
	l := p.s.loop
	l.logf("%s CRASH (held %d runs)", p.owner, len(p.held))
	p.s.oracle.crashed(p)
	p.up = false
	p.stop()
	for _, t := range p.threads {
		if !t.done && t.parked {
			seq := t.waitSeq
			l.at(l.now, func() { l.resume(t, seq) })
		}
	}
}

// flush is the keeper's Flusher: one RunRenewMany, through the network,
// on whichever thread of this process called it (the drain or a gate).
func (p *proc) flush(ctx context.Context, refs []keeper.Ref) ([]int, error) {
	t := p.s.loop.cur
	params := &driver.RunRenewManyParams{Owner: p.owner, Lease: p.s.knobs.Timing.Lease, Runs: make([]driver.RunLeaseRef, len(refs))}
	for i, r := range refs {
		params.Runs[i] = driver.RunLeaseRef{ID: r.ID, Fence: r.Fence}
	}
	var res *driver.RunRenewManyResult
	err := p.call(t, "renew-many", p.flushTimeout(ctx), func() error {
		before := p.s.oracle.beforeRenew(params.Runs)
		var err error
		res, err = p.s.store.RunRenewMany(context.Background(), params)
		if err == nil {
			p.s.oracle.renewed(p, params.Runs, res, before)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return res.Lost, nil
}

// fetchLoop claims runs while slots are free (one slot per run: every
// worker may hold every run).
func (p *proc) fetchLoop(t *thread) {
	s := p.s
	for {
		if free := s.knobs.Runs - len(p.held); free > 0 {
			sent := p.clock.Now()
			var claimed []*driver.Run
			var ops []*porcupine.Operation
			err := p.call(t, "claim", s.knobs.CallTimeout, func() error {
				var err error
				claimed, err = s.store.RunClaim(context.Background(), &driver.RunClaimParams{Queue: "q", Owner: p.owner, Limit: free, Lease: s.knobs.Timing.Lease})
				if err == nil {
					for _, r := range claimed {
						op := s.history.begin(p.id, runInput{run: r.ID, kind: opClaim})
						op.Call = int64(t.sentAt)
						s.history.applied(op, runOutput{ok: true, fence: r.Fence, state: r.State})
						ops = append(ops, op)
					}
				}
				return err
			})
			for _, op := range ops {
				s.history.answered(op, err == nil)
			}
			if err == nil {
				for _, r := range claimed {
					p.hold(r, sent)
				}
			}
		}
		t.sleep(s.fetchEvery)
	}
}

// hold starts working a claimed run.
func (p *proc) hold(r *driver.Run, sent time.Time) {
	ctx, cancel := context.WithCancelCause(p.ctx)
	e, err := p.k.Add(keeper.Ref{ID: r.ID, Fence: r.Fence}, sent, cancel)
	if err != nil {
		panic(err)
	}
	p.held[r.ID] = true
	p.s.loop.logf("%s holds run %d fence %d", p.owner, r.ID, r.Fence)
	h := &holding{p: p, run: r, e: e, ctx: ctx}
	p.s.loop.spawn(p, fmt.Sprintf("%s run %d/%d", p.owner, r.ID, r.Fence), h.work)
	p.s.loop.spawn(p, fmt.Sprintf("%s hb %d/%d", p.owner, r.ID, r.Fence), h.heartbeat)
}

// drainLoop is keeper.drainLoop on the loop: DrainOnce every T_drain
// while the mode drains, backing off from T_drain/8 after a failure.
func (p *proc) drainLoop(t *thread) {
	tm := p.s.knobs.Timing
	var backoff time.Duration
	for {
		next := tm.Drain
		if p.k.Mode().Drains() {
			if err := p.k.DrainOnce(p.ctx); err != nil {
				backoff = min(max(backoff*2, tm.Drain/8), tm.Drain)
				next = backoff
			} else {
				backoff = 0
			}
		}
		t.sleep(next)
	}
}

// watchLoop is the keeper's self-stop timer.
func (p *proc) watchLoop(t *thread) {
	every := min(time.Second, p.s.knobs.Timing.Stop/8)
	for {
		t.sleep(every)
		p.k.WatchOnce()
	}
}

// holding is one run held by a process generation.
type holding struct {
	p    *proc
	run  *driver.Run
	e    *keeper.Entry
	ctx  context.Context
	done bool
}

// heartbeat is scheduler.Worker.heartbeat: every T_renew, renew in memory
// (writebehind, dark) and/or synchronously (sync, dark).
func (h *holding) heartbeat(t *thread) {
	p, s := h.p, h.p.s
	ref := h.e.Ref()
	for !h.done && h.ctx.Err() == nil {
		t.sleep(s.knobs.Timing.Renew)
		if h.done || h.ctx.Err() != nil {
			return
		}
		mode := p.k.Mode()
		if mode.Drains() {
			h.e.Renew()
		}
		if !mode.SyncRenews() {
			continue
		}
		sent := p.clock.Now()
		params := []driver.RunLeaseRef{{ID: ref.ID, Fence: ref.Fence}}
		err := p.call(t, "renew", s.knobs.CallTimeout, func() error {
			before := s.oracle.beforeRenew(params)
			_, err := s.store.RunRenew(context.Background(), &driver.RunRenewParams{ID: ref.ID, Fence: ref.Fence, Owner: p.owner, Lease: s.knobs.Timing.Lease})
			if err == nil {
				s.oracle.renewed(p, params, &driver.RunRenewManyResult{Renewed: []int64{ref.ID}}, before)
			}
			return err
		})
		switch {
		case err == nil:
			h.e.ConfirmSync(sent)
		case errors.Is(err, lease.ErrFenced), errors.Is(err, lease.ErrLeaseExpired), errors.Is(err, lease.ErrNotFound):
			h.e.LoseSync(err)
			return
		}
	}
}

// work is the handler plus scheduler.Worker.work's ending: each effect as
// scheduler.Run.Effect does it, the events of each effect and a Step, then
// the fenced completion (or a fenced fail with the reason).
func (h *holding) work(t *thread) {
	p, s := h.p, h.p.s
	defer func() {
		h.done = true
		delete(p.held, h.run.ID)
		p.k.Release(h.e)
	}()
	// As scheduler.Worker.work: a handler that returned nil is completed
	// (fenced); one that failed while its context was cancelled fails with
	// the keeper's cause.
	err := h.effects(t)
	if err != nil && h.ctx.Err() != nil {
		if cause := context.Cause(h.ctx); cause != nil {
			err = cause
		}
	}
	id, fence := h.run.ID, h.run.Fence
	if err == nil {
		op := s.history.begin(p.id, runInput{run: id, kind: opComplete, fence: fence})
		cerr := p.call(t, "complete", s.knobs.CallTimeout, func() error {
			r, err := s.store.RunComplete(context.Background(), &driver.RunCompleteParams{ID: id, Fence: fence})
			s.oracle.fencedWrite(p, "complete", id, fence, err)
			s.history.applied(op, outcome(r, err))
			return err
		})
		s.history.answered(op, cerr != errTimeout)
		s.loop.logf("%s complete run %d fence %d: %v", p.owner, id, fence, cerr)
		return
	}
	reason := err.Error()
	if len(reason) > runs.MaxReasonBytes {
		reason = reason[:runs.MaxReasonBytes]
	}
	op := s.history.begin(p.id, runInput{run: id, kind: opFail, fence: fence})
	ferr := p.call(t, "fail", s.knobs.CallTimeout, func() error {
		r, err := s.store.RunFail(context.Background(), &driver.RunFailParams{ID: id, Fence: fence, Reason: reason, RetryAfter: s.knobs.Timing.Poll})
		s.oracle.fencedWrite(p, "fail", id, fence, err)
		s.history.applied(op, outcome(r, err))
		return err
	})
	s.history.answered(op, ferr != errTimeout)
	s.loop.logf("%s fail run %d fence %d (%v): %v", p.owner, id, fence, err, ferr)
}

// outcome is a fenced write's answer for the history: refused writes
// (ErrFenced) are answers too.
func outcome(r *driver.Run, err error) runOutput {
	if err != nil {
		return runOutput{ok: false}
	}
	return runOutput{ok: true, fence: r.Fence, state: r.State}
}

// effects runs the handler's effects and events.
func (h *holding) effects(t *thread) error {
	p, s := h.p, h.p.s
	id, fence := h.run.ID, h.run.Fence
	tm := s.knobs.Timing
	var seq int64
	for i := range s.knobs.Effects {
		key := fmt.Sprintf("e%d", i)
		maxDur := min(tm.MaxEffect(), time.Duration(float64(tm.MaxEffect())*0.3*s.loop.rng.Float64())+time.Millisecond)
		for {
			if h.ctx.Err() != nil {
				return context.Cause(h.ctx)
			}
			// scheduler.Run.Effect: check, gate, intent, gate, invoke, commit.
			if err := tm.CheckEffect(maxDur); err != nil {
				return err
			}
			if err := h.e.Gate(h.ctx, maxDur); err != nil {
				return err
			}
			var eff *driver.Effect
			err := p.call(t, "effect-begin", s.knobs.CallTimeout, func() error {
				var err error
				eff, err = s.store.RunEffectBegin(context.Background(), &driver.RunEffectParams{RunID: id, Fence: fence, Key: key})
				return err
			})
			if err != nil {
				return err
			}
			if eff.Outcome == driver.EffectCommitted {
				break
			}
			if eff.Outcome == driver.EffectUncertain {
				// Reconcile with the downstream system, then resolve.
				happened := s.witness.reconcile(id, key, fence)
				s.oracle.reportUncertain(id, key)
				s.loop.logf("%s run %d fence %d: effect %s uncertain (happened: %v)", p.owner, id, fence, key, happened)
				err := p.call(t, "effect-resolve", s.knobs.CallTimeout, func() error {
					_, err := s.store.RunEffectResolve(context.Background(), &driver.RunEffectResolveParams{RunID: id, Fence: fence, Key: key, Committed: happened})
					return err
				})
				if err != nil {
					return err
				}
				continue
			}
			if err := h.e.Gate(h.ctx, maxDur); err != nil {
				return err
			}
			s.oracle.invoke(p, id, key, fence)
			t.sleep(time.Duration(s.loop.rng.Int64N(int64(maxDur) + 1)))
			err = p.call(t, "effect-commit", s.knobs.CallTimeout, func() error {
				_, err := s.store.RunEffectCommit(context.Background(), &driver.RunEffectCommitParams{RunID: id, Fence: fence, Key: key})
				s.oracle.fencedWrite(p, "effect-commit", id, fence, err)
				return err
			})
			if err != nil {
				return err
			}
			break
		}
		if s.knobs.Events == 0 {
			continue
		}
		batch := make([]driver.RunEventInsert, s.knobs.Events)
		for j := range batch {
			seq++
			batch[j] = driver.RunEventInsert{RunID: id, Fence: fence, Seq: seq, Kind: "step", Payload: []byte(fmt.Sprintf(`{"effect":%d,"n":%d}`, i, j))}
		}
		var fenced []int
		err := p.call(t, "events", s.knobs.CallTimeout, func() error {
			res, err := s.store.RunEventAppend(context.Background(), &driver.RunEventAppendParams{Events: batch})
			if err == nil {
				fenced = res.Fenced
				s.oracle.eventsWritten(p, batch, fenced)
			}
			return err
		})
		if err != nil {
			return err
		}
		if len(fenced) > 0 {
			return fmt.Errorf("events of run %d refused under fence %d: %w", id, fence, lease.ErrFenced)
		}
		s.oracle.eventsAcked(batch) // Step returned: durable
	}
	return nil
}
