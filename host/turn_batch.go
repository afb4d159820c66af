package host

import (
	"context"
	"errors"
	"time"

	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// flight is one turn batch's group commit, sent and not yet landed. The
// loop decides the next batch while it flies (double buffering), so the
// program's work and the store's overlap; it is the only thing another
// goroutine does for the world, and the holder is touched by nobody else
// until it lands.
type flight struct {
	turned []*decision
	keys   map[string]*decision // its commands by key: a retry arriving while it flies joins it
	n      int                  // entries sent
	start  time.Time            // when its batch's turn began (the load meter's turn time)
	now    time.Time            // the clock at its turn (the key memory's age)
	done   rt.Event
	outs   []journal.AppendOutcome
	err    error
}

// answer is a reply decided for a command while a batch flies. It depends
// on the state that batch left, which is not yet known to be the
// journal's, so it is held until the batch lands, and thrown away (the
// command decided again) if it did not.
type answer struct {
	p     *pending
	reply Reply
	err   error
}

// turn decides a batch of commands against the mirror, runs their side
// effects (turn_effects.go) and sends one entry per new command in one
// group commit, which it returns in flight; fl is the batch still in the
// air from the last turn, landed here before anything is sent. false: the
// lease is gone and the loop ended.
//
// Deciding while fl flies is speculative: the mirror's state holds fl's
// events before the journal is known to. So nothing decided then is
// answered or sent until fl landed whole with a clean mirror; if it did
// not, the batch's commands go back to the inbox and are decided again
// after the rebuild. A batch that needs the store or the holder before
// it is decided (a dirty mirror, an uncertain effect to settle, an effect
// to run) waits for fl to land first.
func (hw *hosted) turn(ctx context.Context, batch []*pending, fl *flight) (*flight, bool) {
	m := hw.m
	if fl != nil && (m.dirty || len(m.fx) > 0) {
		if !hw.land(ctx, fl) {
			hw.refuseEnded(batch)
			return nil, false
		}
		fl = nil
	}
	now := hw.h.clock.Now()
	if lag := now.Sub(hw.confirmedAt); lag >= hw.h.cfg.Timing.Stop {
		if fl != nil && !hw.land(ctx, fl) {
			hw.refuseEnded(batch)
			return nil, false
		}
		for _, p := range batch {
			p.finish(Reply{}, &NotHolderError{World: hw.world})
		}
		hw.selfStop(lag)
		return nil, false
	}
	if m.dirty {
		if err := m.catchUp(ctx, hw.h.cfg.Store, hw.h.clock.Now); err != nil {
			for _, p := range batch {
				p.finish(Reply{}, &UnknownOutcomeError{World: hw.world, Key: p.cmd.Key, Err: err})
			}
			return nil, true
		}
	}
	// Effects an earlier holder started and never turned are settled (or
	// answered uncertain) before anything is decided. (With fl in the air
	// there are none: m.fx is empty.)
	batch = hw.settleUncertain(ctx, batch)
	start := hw.h.clock.Now()
	speculative := fl != nil
	var held []answer
	reply := func(p *pending, r Reply, err error) {
		if speculative {
			held = append(held, answer{p, r, err})
			return
		}
		p.finish(r, err)
	}
	t0 := hw.h.clock.Now()
	decided, undecided := hw.decide(batch, fl, reply, speculative)
	hw.h.decideTime.Add(int64(hw.h.clock.Now().Sub(t0)))
	if fl != nil {
		if !hw.land(ctx, fl) {
			hw.refuseEnded(pendingOf(held, decided, undecided))
			return nil, false
		}
		if m.dirty {
			// fl did not land whole, or a decision of this batch failed
			// half applied: the state is not the journal's. Every command
			// of this batch is decided again after the rebuild.
			hw.requeue(pendingOf(held, decided, undecided))
			return nil, true
		}
		for _, a := range held {
			a.p.finish(a.reply, a.err)
		}
		// The lag was judged before fl landed; judged again before this
		// batch is sent.
		if lag := hw.h.clock.Now().Sub(hw.confirmedAt); lag >= hw.h.cfg.Timing.Stop {
			m.dirty = true
			for _, p := range pendingOf(nil, decided, undecided) {
				p.finish(Reply{}, &NotHolderError{World: hw.world})
			}
			hw.selfStop(lag)
			return nil, false
		}
	}
	if len(undecided) > 0 {
		hw.requeue(undecided)
	}
	hw.runEffects(ctx, decided)
	var (
		entries []world.Entry
		turned  []*decision
	)
	for _, d := range decided {
		if d.dropped {
			continue
		}
		if d.payload == nil {
			var err error
			if d.payload, err = encodeTurn(&turn{Program: m.prog.Name(), Hash: d.hash, Events: d.events, Reply: d.reply, Effects: d.outcomes}); err != nil {
				// The effects ran: their intents stay pending, so a retry
				// is answered uncertain, never invoked again.
				m.dirty = true
				d.finish(Reply{}, &CommandError{World: hw.world, Key: d.key, Err: err})
				continue
			}
		}
		entries = append(entries, world.Entry{Kind: TurnKind, Key: d.key, Payload: d.payload})
		turned = append(turned, d)
	}
	if len(entries) == 0 {
		return nil, true
	}
	return hw.launch(ctx, entries, turned, start, now), true
}

// decide decides the batch's commands in order against the mirror's
// state, applying each one's events; fl (nil for none) is the batch in
// the air, whose keys are not yet in the mirror's memory. It returns the
// commands decided and those left undecided (after a half-applied
// decision, or, while speculative, from the first command with an effect
// on: effects are run only on a landed state).
func (hw *hosted) decide(batch []*pending, fl *flight, reply func(*pending, Reply, error), speculative bool) (decided []*decision, undecided []*pending) {
	m := hw.m
	inBatch := make(map[string]*decision, len(batch))
	decided = make([]*decision, 0, len(batch))
	for i, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.finish(Reply{}, err) // the submitter gave up before its turn: nothing is journaled for it
			continue
		}
		if r, ok := m.keys[p.cmd.Key]; ok { // journaled: the answer cannot change
			if r.hash != p.hash {
				p.finish(Reply{}, &KeyReusedError{World: hw.world, Key: p.cmd.Key, Position: r.pos})
			} else {
				p.finish(Reply{Position: r.pos, Payload: r.reply, Duplicate: true, Effects: r.effects}, nil)
			}
			continue
		}
		if fl != nil {
			if d, ok := fl.keys[p.cmd.Key]; ok { // in the air: it shares that turn's answer
				if d.hash != p.hash {
					reply(p, Reply{}, &KeyReusedError{World: hw.world, Key: p.cmd.Key})
				} else {
					d.owners = append(d.owners, p)
				}
				continue
			}
		}
		if d, ok := inBatch[p.cmd.Key]; ok { // the same key twice in one batch: one turn
			if d.hash != p.hash {
				reply(p, Reply{}, &KeyReusedError{World: hw.world, Key: p.cmd.Key})
			} else {
				d.owners = append(d.owners, p)
			}
			continue
		}
		dec, err := m.state.Decide(p.cmd)
		if err == nil && len(dec.Effects) > 0 {
			if speculative {
				return decided, append(undecided, batch[i:]...)
			}
			err = hw.effectsAllowed(dec.Effects)
		}
		if err != nil {
			reply(p, Reply{}, &CommandError{World: hw.world, Key: p.cmd.Key, Err: err})
			continue
		}
		r, err := compactReply(dec.Reply)
		if err != nil {
			reply(p, Reply{}, &CommandError{World: hw.world, Key: p.cmd.Key, Err: err})
			continue
		}
		d := &decision{owners: []*pending{p}, key: p.cmd.Key, hash: p.hash, reply: r, events: dec.Events, effects: dec.Effects}
		if len(d.effects) == 0 { // encoded now: a turn too large is refused before its events are applied
			if d.payload, err = encodeTurn(&turn{Program: m.prog.Name(), Hash: d.hash, Events: d.events, Reply: r}); err != nil {
				reply(p, Reply{}, &CommandError{World: hw.world, Key: p.cmd.Key, Err: err})
				continue
			}
		}
		for _, ev := range d.events {
			if err := m.state.Apply(ev); err != nil {
				// Part of the turn is in the state: rebuild it before the
				// next decision, and journal none of this command; the
				// commands after it wait for the next batch.
				m.dirty = true
				reply(p, Reply{}, &CommandError{World: hw.world, Key: p.cmd.Key, Err: err})
				return decided, append(undecided, batch[i+1:]...)
			}
		}
		inBatch[p.cmd.Key] = d
		decided = append(decided, d)
	}
	return decided, undecided
}

// launch sends the batch's entries in one group commit on a goroutine of
// its own and returns it in flight. The append is bounded by the
// holder's runway: past it the holder could not act on the answer, and a
// deadline lets the store roll an append that cannot commit in time back
// instead of leaving it unknown.
func (hw *hosted) launch(ctx context.Context, entries []world.Entry, turned []*decision, start, now time.Time) *flight {
	fl := &flight{turned: turned, n: len(entries), start: start, now: now, done: hw.h.cfg.Runtime.NewEvent(),
		keys: make(map[string]*decision, len(turned))}
	for _, d := range turned {
		fl.keys[d.key] = d
	}
	actx, cancel := hw.h.cfg.Runtime.WithTimeout(ctx, max(hw.holder.Runway(), hw.h.cfg.Timing.Drain))
	seen := hw.seen()
	hw.h.turnBatches.Add(1)
	hw.h.turnEntries.Add(int64(len(entries)))
	hw.h.cfg.Runtime.Go("host.append", func() {
		defer fl.done.Fire()
		defer cancel()
		fl.outs, fl.err = hw.holder.Append(actx, seen, entries...)
	})
	return fl
}

// land waits for fl's append and answers its commands. false: the lease
// is gone and the loop ended.
func (hw *hosted) land(ctx context.Context, fl *flight) bool {
	// Not bounded by ctx: the append is (by the runway), and the holder is
	// the flight's until it returns.
	t0 := hw.h.clock.Now()
	hw.h.cfg.Runtime.Wait(context.WithoutCancel(ctx), fl.done, -1)
	hw.h.appendWait.Add(int64(hw.h.clock.Now().Sub(t0)))
	m := hw.m
	if err := fl.err; err != nil {
		m.dirty = true // the decided events are in the state, not (known to be) in the journal
		var he *world.HolderError
		if errors.As(err, &he) { // refused by the holder itself: nothing was sent
			for _, d := range fl.turned {
				d.finish(Reply{}, &NotHolderError{World: hw.world})
			}
			if he.Reason == world.RefusedNoEpoch {
				hw.release(&NotHolderError{World: hw.world})
				return false
			}
			return true
		}
		for _, d := range fl.turned {
			d.finish(Reply{}, &UnknownOutcomeError{World: hw.world, Key: d.key, Err: err})
		}
		return true
	}
	// A new entry lands past the mirror (the holder's own lease.renewed
	// entries may sit between); a key the store already held answers its
	// first position, a turn entry the clean mirror has folded, so at or
	// before m.pos.
	last, lost := m.pos, false
	for i, o := range fl.outs {
		d := fl.turned[i]
		switch {
		case o.Err != nil:
			m.dirty = true
			var re *journal.RefusedError
			if errors.As(o.Err, &re) && (errors.Is(o.Err, lease.ErrFenced) || errors.Is(o.Err, lease.ErrNotHolder) || errors.Is(o.Err, lease.ErrLeaseExpired)) {
				lost = true
				d.finish(Reply{}, &NotHolderError{World: hw.world})
				continue
			}
			d.finish(Reply{}, &CommandError{World: hw.world, Key: d.key, Err: o.Err})
		case o.Position > last:
			last = o.Position
			m.remember(d.key, keyRecord{hash: d.hash, reply: d.reply, pos: o.Position, effects: d.outcomes}, fl.now)
			delete(m.fx, d.key)
			d.finish(Reply{Position: o.Position, Payload: d.reply, Effects: d.outcomes}, nil)
		default:
			// The store already held this key (applied before the mirror's
			// memory of keys reaches): nothing was written for it, and the
			// events decided now are not the journal's.
			m.dirty = true
			hw.answerFromJournal(ctx, d.owners, d.hash, o.Position)
		}
	}
	if !m.dirty {
		m.pos = last
	}
	hw.load.turned(fl.n, hw.h.clock.Now().Sub(fl.start))
	if lost {
		w, _, _ := hw.holder.Read(ctx)
		nh := &NotHolderError{World: hw.world}
		if w != nil && w.State.Holder != hw.h.cfg.Node {
			nh.Holder, nh.Epoch = w.State.Holder, w.State.Epoch
		}
		if hw.holder.Epoch() == 0 {
			hw.release(nh)
			return false
		}
	}
	return true
}

// pendingOf is every command of a batch decided while another flew and
// not yet answered: the held answers, the decided turns' owners and the
// undecided.
func pendingOf(held []answer, decided []*decision, undecided []*pending) []*pending {
	var ps []*pending
	for _, a := range held {
		ps = append(ps, a.p)
	}
	for _, d := range decided {
		ps = append(ps, d.owners...)
	}
	return append(ps, undecided...)
}

// requeue puts commands back at the front of the inbox, in their order.
func (hw *hosted) requeue(ps []*pending) {
	var back []*pending
	for _, p := range ps {
		if !p.done.Fired() {
			back = append(back, p)
		}
	}
	hw.mu.Lock()
	hw.inbox = append(back, hw.inbox...)
	hw.mu.Unlock()
}

// refuseEnded answers commands the ended loop had taken: what every
// queued command got at the end.
func (hw *hosted) refuseEnded(ps []*pending) {
	hw.mu.Lock()
	err := hw.endErr
	hw.mu.Unlock()
	if err == nil {
		err = &NotHolderError{World: hw.world}
	}
	for _, p := range ps {
		if !p.done.Fired() {
			p.finish(Reply{}, err)
		}
	}
}
