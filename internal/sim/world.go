package sim

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
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

// worldLoop is the program of one process generation's holder: the seeded
// choice of what to do next (read the head, renew, append n entries, hand
// off to whom) and the sleeps between. The protocol — which epoch it may
// adopt, the synchronous renewal before the first append, the runway, what
// a refusal or a handoff drops — is the shipped world.Holder, a new one per
// generation; its store is this thread's view of the network (worldStore)
// and its clock the process's.
func (p *proc) worldLoop(t *thread) {
	s := p.s
	tm := s.knobs.Timing
	ws := &worldStore{p: p, t: t}
	h, err := world.NewHolder(world.HolderConfig{Store: ws, Clock: p.clock, World: worldID, Name: nodeName(p.id), Timing: tm})
	if err != nil {
		panic(err) // the knobs are validated
	}
	var to string // the handoff target chosen, for the history
	ws.ask = func(op string) worldInput {
		in := worldInput{kind: wRenew, holder: h.Name(), epoch: h.Epoch()}
		if op == "handoff" {
			in.kind, in.to = wHandoff, to
		}
		return in
	}
	ctx := context.Background()
	seq := 0
	for {
		t.sleep(tm.Renew/4 + time.Duration(s.loop.rng.Int64N(int64(tm.Renew/2)+1)))
		w, adopted, err := h.Read(ctx)
		if err != nil {
			continue
		}
		if adopted {
			// SPEC §4: a synchronous renewal before the first append; a
			// failed one drops the epoch until the next read.
			_ = h.Renew(ctx)
			continue
		}
		if h.Epoch() == 0 {
			continue
		}
		switch r := s.loop.rng.IntN(10); {
		case h.Runway() < tm.Stop/2 || r == 0:
			_ = h.Renew(ctx)
		case r == 1 && len(s.procs) > 1:
			to = nodeName((p.id + 1 + s.loop.rng.IntN(len(s.procs)-1)) % len(s.procs))
			e := h.Epoch()
			if _, err := h.Handoff(ctx, to); err == nil {
				s.loop.logf("%s hands %s epoch %d to %s", p.owner, worldID, e, to)
			}
		default:
			n := 1 + s.loop.rng.IntN(3)
			// The mirror has replayed through the grant or further, to
			// the head last read: seen_position is either.
			seen := h.GrantedAt()
			if s.loop.rng.IntN(2) == 0 {
				seen = max(seen, w.Position)
			}
			entries := make([]world.Entry, n)
			for i := range entries {
				seq++
				entries[i] = world.Entry{Kind: "x", Payload: []byte(fmt.Sprintf(`{"by":%q,"n":%d}`, p.owner, seq))}
			}
			_, _ = h.Append(ctx, seen, entries...)
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
	if o.s.knobs.Host {
		o.finalHost(entries)
	}
	if o.s.knobs.Band {
		o.finalBand(entries)
	}
}
