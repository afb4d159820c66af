package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// The effect phases of a turn (effects.go has the rules).

var errNoEffector = errors.New("the program decided side effects and this host has no Effector")

// effectsAllowed checks a decision's effects before its events are applied.
func (hw *hosted) effectsAllowed(fx []EffectRequest) error {
	if hw.h.cfg.Effector == nil {
		return fmt.Errorf("%w: %w", errNoEffector, lease.ErrInvalid)
	}
	return validEffects(fx, hw.h.cfg.Timing)
}

// settleUncertain answers or settles the commands of batch that have an
// uncertain effect — an intent journaled by an earlier attempt whose turn
// never was — and returns the others with those it settled. With a
// Reconciler it asks downstream and journals each answer as
// host.effect_resolved; without one, the command is answered
// *UncertainEffectError and nothing is invoked.
func (hw *hosted) settleUncertain(ctx context.Context, batch []*pending) []*pending {
	m := hw.m
	rec, canAsk := hw.h.cfg.Effector.(Reconciler)
	var (
		rest    []*pending
		entries []world.Entry
		settled []*pending
		answers []effectResolved
	)
	for _, p := range batch {
		if _, done := m.keys[p.cmd.Key]; done {
			rest = append(rest, p)
			continue
		}
		keys := m.uncertain(p.cmd.Key)
		if len(keys) == 0 {
			rest = append(rest, p)
			continue
		}
		if !canAsk {
			st := m.fx[p.cmd.Key][keys[0]]
			p.finish(Reply{}, &UncertainEffectError{World: hw.world, Command: p.cmd.Key, Key: keys[0], Position: st.pos})
			continue
		}
		ok := true
		var mine []effectResolved
		for _, k := range keys {
			st := m.fx[p.cmd.Key][k]
			call := EffectCall{World: hw.world, Command: p.cmd.Key, Key: k, Epoch: hw.holder.Epoch(), Attempt: st.attempt,
				IdempotencyKey: idempotencyKey(hw.world, p.cmd.Key, k)}
			rctx, cancel := hw.h.cfg.Runtime.WithTimeout(ctx, hw.h.cfg.Timing.Renew)
			happened, result, err := rec.Reconcile(rctx, call)
			cancel()
			if err == nil && len(result) > 0 && !json.Valid(result) {
				err = fmt.Errorf("the reconciler's result is not JSON: %w", lease.ErrInvalid)
			}
			if err != nil {
				p.finish(Reply{}, &UncertainEffectError{World: hw.world, Command: p.cmd.Key, Key: k, Position: st.pos, Err: err})
				ok = false
				break
			}
			mine = append(mine, effectResolved{Command: p.cmd.Key, Key: k, Attempt: st.attempt, Happened: happened, Result: compactOr(result)})
		}
		if !ok {
			continue
		}
		for _, a := range mine {
			b, err := json.Marshal(a)
			if err != nil {
				continue
			}
			entries = append(entries, world.Entry{Kind: EffectResolvedKind, Key: resolvedKey(a.Command, a.Key, a.Attempt), Payload: b})
		}
		answers = append(answers, mine...)
		settled = append(settled, p)
	}
	if len(entries) == 0 {
		return rest
	}
	if !hw.journalOwn(ctx, entries, settled) {
		return rest
	}
	for _, a := range answers {
		st := m.fxOf(a.Command, a.Key)
		st.pending, st.happened, st.result = false, a.Happened, a.Result
	}
	return append(rest, settled...)
}

// journalOwn appends entries of the host's own bookkeeping (intents,
// resolutions) and moves the mirror past them. On any failure the commands
// are answered (not holder, or unknown outcome), the mirror is dirty, and
// false is returned.
func (hw *hosted) journalOwn(ctx context.Context, entries []world.Entry, owners []*pending) bool {
	m := hw.m
	actx, cancel := hw.h.cfg.Runtime.WithTimeout(ctx, max(hw.holder.Runway(), hw.h.cfg.Timing.Drain))
	outs, err := hw.holder.Append(actx, hw.seen(), entries...)
	cancel()
	if err == nil {
		for _, o := range outs {
			if o.Err != nil {
				err = o.Err
				break
			}
		}
	}
	if err != nil {
		m.dirty = true
		var fail error = &UnknownOutcomeError{World: hw.world, Err: err}
		var he *world.HolderError
		var re *journal.RefusedError
		if errors.As(err, &he) || errors.As(err, &re) {
			fail = &NotHolderError{World: hw.world}
		}
		for _, p := range owners {
			if !p.done.Fired() {
				p.finish(Reply{}, fail)
			}
		}
		return false
	}
	last := m.pos
	for _, o := range outs {
		last = max(last, o.Position)
	}
	if !m.dirty {
		m.pos = last
	}
	return true
}

// runEffects runs the effects of the decided commands: those settled as
// happened are answered from the ledger; the others pass the gate, have
// their intents journaled in one batch, and are invoked. A command whose
// effects could not start is answered and dropped from the turn (the
// mirror is then rebuilt, its events having been applied).
func (hw *hosted) runEffects(ctx context.Context, decided []*decision) {
	m, t := hw.m, hw.h.cfg.Timing
	type call struct {
		d    *decision
		i    int
		c    EffectCall
		maxD time.Duration
	}
	var (
		calls   []call
		need    time.Duration
		intents []world.Entry
		owners  []*pending
		with    []*decision
	)
	for _, d := range decided {
		if len(d.effects) == 0 {
			continue
		}
		d.outcomes = make([]EffectOutcome, len(d.effects))
		invokes := false
		for i, f := range d.effects {
			d.outcomes[i].Key = f.Key
			st := m.fx[d.key][f.Key]
			if st != nil && !st.pending && st.happened { // settled: it happened
				d.outcomes[i].Result = st.result
				continue
			}
			attempt := 1
			if st != nil {
				attempt = st.attempt + 1
			}
			payload := compactOr(f.Payload)
			calls = append(calls, call{d: d, i: i, maxD: f.MaxDuration, c: EffectCall{World: hw.world, Command: d.key, Key: f.Key,
				Payload: payload, Epoch: hw.holder.Epoch(), Attempt: attempt, IdempotencyKey: idempotencyKey(hw.world, d.key, f.Key)}})
			b, _ := json.Marshal(effectIntent{Command: d.key, Key: f.Key, Attempt: attempt})
			intents = append(intents, world.Entry{Kind: EffectKind, Key: intentKey(d.key, f.Key, attempt, hw.holder.Epoch()), Payload: b})
			need = max(need, f.MaxDuration)
			invokes = true
		}
		if invokes {
			with = append(with, d)
			owners = append(owners, d.owners...)
		}
	}
	if len(calls) == 0 {
		return
	}
	drop := func(err error) {
		m.dirty = true // their events are in the state
		for _, d := range with {
			d.dropped = true
			if err != nil {
				d.finish(Reply{}, err)
			}
		}
	}
	// The gate (SPEC §2), before the intent: the runway from the last
	// confirmed renewal must cover the longest call and T_drain.
	gateAt, runway := hw.h.clock.Now(), hw.holder.Runway()
	if runway < need+t.Drain && hw.h.renewer != nil {
		// The keeper extends a lease only when its runway runs low; an
		// effect that needs more gets one synchronous renewal now.
		if err := hw.renewOnce(ctx); err == nil {
			hw.setExtended(gateAt)
			if gateAt.After(hw.confirmedAt) {
				hw.confirmedAt = gateAt
			}
			runway = hw.holder.Runway()
		}
	}
	if runway < need+t.Drain {
		hw.h.gateRefusals.Add(1)
		drop(fmt.Errorf("world %s: %d commands' effects need %s of lease runway, %s left: %w",
			hw.world, len(with), need+t.Drain, runway, lease.ErrLeaseRunway))
		return
	}
	if !hw.journalOwn(ctx, intents, owners) {
		drop(nil)
		return
	}
	for _, c := range calls {
		st := m.fxOf(c.c.Command, c.c.Key)
		st.attempt, st.pending, st.happened, st.result = c.c.Attempt, true, false, nil
	}
	// Each call's deadline is inside the gate's window.
	window := gateAt.Add(runway - t.Drain)
	// One goroutine per command, started and awaited through the runtime
	// (the simulator runs this on its loop): a WaitGroup would block the
	// thread outside the runtime's sight.
	r := hw.h.cfg.Runtime
	dones := make([]rt.Event, 0, len(with))
	for _, d := range with {
		done := r.NewEvent()
		dones = append(dones, done)
		r.Go("effects "+hw.world, func() {
			defer done.Fire()
			for _, c := range calls {
				if c.d != d {
					continue
				}
				now := hw.h.clock.Now()
				cctx, cancel := hw.h.cfg.Runtime.WithTimeout(ctx, max(min(window.Sub(now), c.maxD), 0))
				res, err := hw.h.cfg.Effector.Invoke(cctx, c.c)
				cancel()
				hw.h.effects.Add(1)
				switch {
				case err != nil:
					d.outcomes[c.i].Error = err.Error()
				case len(res) > 0 && !json.Valid(res):
					d.outcomes[c.i].Error = "the effector's result is not JSON"
				default:
					d.outcomes[c.i].Result = compactOr(res)
				}
			}
		})
	}
	for _, done := range dones {
		// Not ctx: the calls are bounded by their own deadlines, and their
		// outcomes must be in before the turn is journaled.
		r.Wait(context.Background(), done, -1)
	}
}

// compactOr returns b compacted, or nil when b is empty or not JSON.
func compactOr(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	c, err := journal.NormalizePayload(b)
	if err != nil {
		return nil
	}
	return c
}
