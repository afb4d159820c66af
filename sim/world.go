package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/world"
)

// The world half of the simulation (SPEC §4): one world whose journal
// holds the lease, its home node-0, and a holder on every process —
// node-<id>, the same name across restarts, so a restarted holder is the
// ABA case the epoch must stop. Holders append under their epoch, renew,
// and hand the lease to one another; the store's expiry sweep revokes an
// expired lease and grants home the next epoch. The lease changes are the
// journal planners (journal.PlanGrant, PlanRenew, PlanHandoff, PlanSweep)
// applied by the real SQLite driver's conditional write.

const worldID = "world-1"

func nodeName(id int) string { return fmt.Sprintf("node-%d", id) }

// worldHolder is one process generation's view of the world.
type worldHolder struct {
	p          *proc
	me         string
	startEpoch int64 // the epoch when this generation first looked: older epochs are not its own
	epoch      int64 // the epoch this generation holds, 0 if none
	given      int64 // the highest epoch this generation tried to hand off: never adopted again
	grantedAt  int64
	head       int64     // the head position at the last read: how far the mirror has replayed
	sent       time.Time // send time of the last confirmed write that set the expiry
	seq        int
}

// worldLoop is a holder's life: adopt an epoch delivered to it (a handoff
// or the sweep's grant made after this generation started), renew it
// synchronously before its first append, append, renew, hand off.
func (p *proc) worldLoop(t *thread) {
	s := p.s
	h := &worldHolder{p: p, me: nodeName(p.id), startEpoch: -1}
	tm := s.knobs.Timing
	for {
		t.sleep(tm.Renew/4 + time.Duration(s.loop.rng.Int64N(int64(tm.Renew/2)+1)))
		var w *driver.World
		err := p.call(t, "world-get", s.knobs.CallTimeout, func() error {
			var err error
			w, err = s.store.WorldGet(context.Background(), &driver.WorldGetParams{World: worldID})
			return err
		})
		if err != nil {
			continue
		}
		if h.startEpoch < 0 {
			h.startEpoch = w.Epoch
		}
		h.head = w.Position
		if h.epoch == 0 {
			// Adopt only an epoch given to this holder after this
			// generation started: an older one may be a dead
			// generation's, whose writes may still be in flight.
			// Nor an epoch it handed off itself: the handoff may still be
			// in flight (the Promela model's world-sim-readopt).
			if w.Holder == h.me && w.Epoch > max(h.startEpoch, h.given) {
				h.epoch, h.grantedAt = w.Epoch, w.GrantedAt
				e := h.epoch // the request is what was sent, whenever it lands
				if !h.change(t, "renew", "", func(st journal.State, now time.Time) (journal.Plan, error) {
					return journal.PlanRenew(st, now, h.me, e, tm.Lease)
				}) {
					h.epoch = 0
				}
			}
			continue
		}
		if w.Epoch != h.epoch || w.Holder != h.me {
			h.epoch = 0
			continue
		}
		runway := lease.Runway(h.sent, p.clock.Now(), tm)
		e := h.epoch // the request is what was sent, whenever it lands
		switch r := s.loop.rng.IntN(10); {
		case runway < tm.Stop/2 || r == 0:
			if !h.change(t, "renew", "", func(st journal.State, now time.Time) (journal.Plan, error) {
				return journal.PlanRenew(st, now, h.me, e, tm.Lease)
			}) {
				h.epoch = 0
			}
		case r == 1 && len(s.procs) > 1:
			to := nodeName((p.id + 1 + s.loop.rng.IntN(len(s.procs)-1)) % len(s.procs))
			h.given = max(h.given, e)
			if h.change(t, "handoff", to, func(st journal.State, now time.Time) (journal.Plan, error) {
				return journal.PlanHandoff(st, now, h.me, to, e, tm.Lease)
			}) {
				s.loop.logf("%s hands %s epoch %d to %s", p.owner, worldID, e, to)
			}
			h.epoch = 0
		default:
			h.append(t, 1+s.loop.rng.IntN(3))
		}
	}
}

// change makes a lease change with the planner; it reports success and
// records the send time of a confirmed write that set the expiry.
func (h *worldHolder) change(t *thread, op string, to string, plan func(journal.State, time.Time) (journal.Plan, error)) bool {
	p, s := h.p, h.p.s
	sent := p.clock.Now()
	var w *driver.World
	in := worldInput{kind: wRenew, holder: h.me, epoch: h.epoch, to: to}
	if op == "handoff" {
		in.kind = wHandoff
	}
	hop := s.worldHistory.begin(p.id, in)
	err := p.call(t, "world-"+op, s.knobs.CallTimeout, func() error {
		var err error
		w, err = s.store.LeaseChange(context.Background(), &driver.LeaseChangeParams{World: worldID, Op: op,
			Plan: func(cur *driver.World, now time.Time) (journal.Plan, error) { return plan(cur.State, now) }})
		if err == nil {
			s.worldHistory.applied(hop, worldOutput{ok: true, epoch: w.Epoch, holder: w.Holder, positions: []int64{w.Position}})
		} else {
			s.worldHistory.applied(hop, worldOutput{ok: false})
		}
		return err
	})
	s.worldHistory.answered(hop, err != errTimeout)
	if err != nil {
		return false
	}
	if op != "handoff" {
		h.sent, h.grantedAt = sent, w.GrantedAt
	}
	return true
}

// append appends n entries under the held epoch, once the lease has
// runway; each acknowledged one is remembered with its position.
func (h *worldHolder) append(t *thread, n int) {
	p, s := h.p, h.p.s
	if lease.Runway(h.sent, p.clock.Now(), s.knobs.Timing) <= 0 {
		return
	}
	// The mirror may have replayed up to the grant or further, to the
	// head it last read: seen_position is either.
	seen := h.grantedAt
	if s.loop.rng.IntN(2) == 0 {
		seen = max(seen, h.head)
	}
	reqs := make([]journal.AppendRequest, n)
	for i := range reqs {
		h.seq++
		reqs[i] = journal.AppendRequest{Holder: h.me, Epoch: h.epoch, SeenPosition: seen, Kind: "x",
			Payload: []byte(fmt.Sprintf(`{"by":%q,"n":%d}`, p.owner, h.seq))}
	}
	var outs []journal.AppendOutcome
	hop := s.worldHistory.begin(p.id, worldInput{kind: wAppend, holder: h.me, epoch: h.epoch})
	err := p.call(t, "append", s.knobs.CallTimeout, func() error {
		var err error
		outs, err = s.store.JournalAppend(context.Background(), &driver.JournalAppendParams{World: worldID, Requests: reqs})
		if err == nil {
			s.oracle.appended(p, reqs, outs)
			out := worldOutput{ok: true}
			for _, o := range outs {
				if o.Err == nil {
					out.positions = append(out.positions, o.Position)
				}
			}
			s.worldHistory.applied(hop, out)
		}
		return err
	})
	s.worldHistory.answered(hop, err != errTimeout)
	if err != nil {
		return
	}
	for i, o := range outs {
		if o.Err != nil {
			if errors.Is(o.Err, lease.ErrFenced) || errors.Is(o.Err, lease.ErrNotHolder) || errors.Is(o.Err, lease.ErrLeaseExpired) {
				h.epoch = 0
			}
			continue
		}
		s.oracle.ackedEntries = append(s.oracle.ackedEntries, ackedEntry{position: o.Position, payload: reqs[i].Payload})
	}
}

// sweepLoop is world.Sweeper at the store: every P, the expiry sweep.
func (s *Sim) sweepLoop(t *thread) {
	for {
		t.sleep(s.knobs.Timing.Poll)
		res, err := world.SweepExpired(context.Background(), s.store, 0)
		if err != nil {
			panic(err)
		}
		for _, sw := range res.Swept {
			s.oracle.swept(sw)
			op := s.worldHistory.begin(-1, worldInput{kind: wSweep, holder: sw.Granted.Holder})
			s.worldHistory.applied(op, worldOutput{ok: true, epoch: sw.Granted.Epoch, holder: sw.Granted.Holder,
				positions: []int64{sw.Revoked.Position, sw.Granted.Position}})
			s.worldHistory.answered(op, true)
		}
	}
}

type ackedEntry struct {
	position int64
	payload  []byte
}

// appended checks, at commit, that each accepted append carries the epoch
// and holder in force at its commit.
func (o *oracle) appended(p *proc, reqs []journal.AppendRequest, outs []journal.AppendOutcome) {
	w, err := o.s.store.WorldGet(context.Background(), &driver.WorldGetParams{World: worldID})
	if err != nil {
		panic(err)
	}
	for i, out := range outs {
		if out.Err == nil && (reqs[i].Epoch != w.Epoch || reqs[i].Holder != w.Holder) {
			o.fail(InvFence, "append by %s (%s, epoch %d) accepted at position %d while %s holds epoch %d",
				p.owner, reqs[i].Holder, reqs[i].Epoch, out.Position, w.Holder, w.Epoch)
		}
	}
}

// swept checks the sweep's bound: an expired lease revoked within P + S of
// its expiry, on the store clock.
func (o *oracle) swept(sw world.SweptWorld) {
	tm := o.s.knobs.Timing
	if late := sw.StoreTimeAt.Sub(sw.ExpiredAt); late > tm.Poll+tm.Skew {
		o.fail(InvDead, "world %s swept %v after its lease expired (> P+S = %v)", sw.World, late, tm.Poll+tm.Skew)
	}
	o.sweeps++
}

// finalWorld audits the journal and finds every acknowledged append once,
// at the position it was acknowledged at.
func (o *oracle) finalWorld() {
	var entries []journal.Entry
	for from := int64(1); ; {
		es, err := o.s.store.JournalRead(context.Background(), &driver.JournalReadParams{World: worldID, From: from, Limit: 1000})
		if err != nil {
			panic(err)
		}
		entries = append(entries, es...)
		if len(es) < 1000 {
			break
		}
		from += int64(len(es))
	}
	if rep := journal.Audit(entries); !rep.OK() {
		o.fail(InvJournal, "the journal does not audit: %v", rep.Violation)
	}
	seen := map[string]int{}
	for _, e := range entries {
		if e.Kind == "x" {
			seen[string(e.Payload)]++
		}
	}
	for _, a := range o.ackedEntries {
		i := a.position - 1
		if i < 0 || i >= int64(len(entries)) || !bytes.Equal(entries[i].Payload, a.payload) {
			o.fail(InvJournal, "acknowledged append %s is not at its position %d", a.payload, a.position)
			continue
		}
		if seen[string(a.payload)] != 1 {
			o.fail(InvJournal, "acknowledged append %s is in the journal %d times", a.payload, seen[string(a.payload)])
		}
	}
	o.entries = len(entries)
}
