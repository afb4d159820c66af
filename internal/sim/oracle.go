package sim

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// Violation is a broken invariant: which, and what was seen.
type Violation struct {
	At        time.Duration // virtual time
	Invariant string
	Detail    string
}

func (v Violation) String() string {
	return fmt.Sprintf("%.3fs %s: %s", v.At.Seconds(), v.Invariant, v.Detail)
}

// The invariants (SPEC §5).
const (
	InvFence      = "fence"      // every accepted write carries the fence current at its commit
	InvRevive     = "no-revive"  // a renewal never extends a lease already expired on the store clock
	InvExpired    = "no-expired" // no effect invoked while its invoker's lease is expired on the store clock
	InvOnce       = "once"       // a second invocation for (run, key) only after an uncertain report
	InvEvents     = "events"     // every acknowledged event present at the end, once, in order
	InvLive       = "live"       // no live holder reclaimed (store clock error within S)
	InvDead       = "dead"       // a dead holder's run reclaimed within T_lease + P + S of its last renewal
	InvAccounted  = "accounted"  // every run ends completed, failed with a reason, or legitimately running
	InvLinearized = "linearizable"
	InvJournal    = "journal" // the journal audits; every acknowledged append present once, where acknowledged
)

type effectKey struct {
	run int64
	key string
}

// witness is the downstream system, outside the ledger: it records every
// invocation of an effect with its fence token and rejects lower tokens.
type witness struct {
	highest map[effectKey]int64 // the highest accepted token
	floor   map[effectKey]int64 // the lowest token accepted, raised by reconcile
	calls   map[effectKey]int
	last    map[effectKey]time.Duration
}

// reconcile answers a holder told of an uncertain effect: whether a call
// was accepted; and it raises the lowest accepted token to the asker's, so
// a paused holder's later, lower call is refused (see witness.Reconcile in
// internal/witness).
func (w *witness) reconcile(run int64, key string, fence int64) bool {
	k := effectKey{run, key}
	_, ok := w.highest[k]
	w.floor[k] = max(w.floor[k], fence)
	return ok
}

type ackedEvent struct{ run, fence, seq int64 }

// oracle checks the invariants as the simulation runs.
type oracle struct {
	s          *Sim
	violations []Violation
	uncertain  map[effectKey]time.Duration // the last uncertain report
	acked      []ackedEvent
	// stored is every event the store has accepted: a retried batch (the
	// event committer retries one whose answer was lost) is answered as
	// accepted for the events already there, which were checked when
	// they were first written.
	stored map[ackedEvent]bool
	// deadlines of the runs held by crashed generations: owner → run → by
	// when (store clock) the reclaimer must have taken it back.
	dead map[string]map[int64]time.Time
	// Figures.
	invocations, refusedByWitness, uncertainReports, reclaims, maxStrand int
	lateRenewals                                                         int
	ackedEntries                                                         []ackedEntry
	sweeps                                                               int
	entries                                                              int
	strands                                                              []time.Duration
}

func (o *oracle) fail(inv, format string, args ...any) {
	v := Violation{At: o.s.loop.now, Invariant: inv, Detail: fmt.Sprintf(format, args...)}
	o.s.loop.logf("VIOLATION %s", v)
	o.violations = append(o.violations, v)
}

// row reads a run directly at the store (no network, no fault).
func (o *oracle) row(id int64) *driver.Run {
	r, err := o.s.store.RunGet(context.Background(), &driver.RunGetParams{ID: id})
	if err != nil {
		panic(fmt.Sprintf("sim: reading run %d: %v", id, err))
	}
	return r
}

// fencedWrite checks an accepted runner write (complete, fail, effect
// commit) against the row it left: the fence is the writer's.
func (o *oracle) fencedWrite(p *proc, op string, id, fence int64, err error) {
	if err != nil {
		return
	}
	if r := o.row(id); r.Fence != fence {
		o.fail(InvFence, "%s by %s of run %d accepted under fence %d, but the run's fence is %d", op, p.owner, id, fence, r.Fence)
	}
}

// beforeRenew reads the leases a renewal is about to touch.
func (o *oracle) beforeRenew(refs []driver.RunLeaseRef) map[int64]*driver.Run {
	out := make(map[int64]*driver.Run, len(refs))
	now := o.s.storeClock.Now()
	for _, r := range refs {
		if row, err := o.s.store.RunGet(context.Background(), &driver.RunGetParams{ID: r.ID}); err == nil {
			out[r.ID] = row
			if row.State == runs.StateRunning && row.Fence == r.Fence && !row.ExpiresAt.After(now) {
				o.lateRenewals++ // the store must refuse it: an expired lease, not yet reclaimed
			}
		}
	}
	return out
}

// renewed checks each renewed lease: under its fence, not revived.
func (o *oracle) renewed(p *proc, refs []driver.RunLeaseRef, res *driver.RunRenewManyResult, before map[int64]*driver.Run) {
	now := o.s.storeClock.Now()
	fence := map[int64]int64{}
	for _, r := range refs {
		fence[r.ID] = r.Fence
	}
	for _, id := range res.Renewed {
		b := before[id]
		if b == nil || b.Fence != fence[id] || b.State != runs.StateRunning {
			o.fail(InvFence, "renewal by %s of run %d under fence %d accepted, but the run was %+v", p.owner, id, fence[id], b)
			continue
		}
		if !b.ExpiresAt.After(now) {
			o.fail(InvRevive, "renewal by %s revived run %d fence %d: it had expired at %s, store now %s",
				p.owner, id, fence[id], b.ExpiresAt.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
		}
	}
}

// eventsWritten checks the accepted events' fence.
func (o *oracle) eventsWritten(p *proc, batch []driver.RunEventInsert, fenced []int) {
	refused := map[int]bool{}
	for _, i := range fenced {
		refused[i] = true
	}
	if o.stored == nil {
		o.stored = map[ackedEvent]bool{}
	}
	for i, e := range batch {
		k := ackedEvent{e.RunID, e.Fence, e.Seq}
		if refused[i] || o.stored[k] {
			continue
		}
		o.stored[k] = true
		if r := o.row(e.RunID); r.Fence != e.Fence || r.State != runs.StateRunning {
			o.fail(InvFence, "event %d of run %d by %s accepted under fence %d, but the run is %s under fence %d", e.Seq, e.RunID, p.owner, e.Fence, r.State, r.Fence)
		}
	}
}

func (o *oracle) eventsAcked(batch []driver.RunEventInsert) {
	for _, e := range batch {
		o.acked = append(o.acked, ackedEvent{e.RunID, e.Fence, e.Seq})
	}
}

func (o *oracle) reportUncertain(id int64, key string) {
	o.uncertain[effectKey{id, key}] = o.s.loop.now
	o.uncertainReports++
}

// invoke is the effect function's start: the lease must be live on the
// store clock, and a second invocation must follow an uncertain report.
// Then the witness takes the call (or rejects a lower token).
func (o *oracle) invoke(p *proc, id int64, key string, fence int64) {
	now := o.s.storeClock.Now()
	r := o.row(id)
	if r.State != runs.StateRunning || r.Fence != fence || !r.ExpiresAt.After(now) {
		o.fail(InvExpired, "%s invoked effect %s of run %d under fence %d while the run is %s under fence %d, expiring %s (store now %s)",
			p.owner, key, id, fence, r.State, r.Fence, r.ExpiresAt.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano))
	}
	k := effectKey{id, key}
	w := o.s.witness
	if w.calls[k] > 0 {
		if u, ok := o.uncertain[k]; !ok || u < w.last[k] {
			o.fail(InvOnce, "%s invoked effect %s of run %d again (call %d) without an uncertain report since the last call", p.owner, key, id, w.calls[k]+1)
		}
	}
	w.calls[k]++
	w.last[k] = o.s.loop.now
	o.invocations++
	if fence < max(w.highest[k], w.floor[k]) {
		o.refusedByWitness++
		return
	}
	w.highest[k] = fence
	o.s.loop.logf("%s invokes effect %s of run %d under fence %d", p.owner, key, id, fence)
}

// crashed notes the runs a dying generation holds and when the reclaimer
// must have them back.
func (o *oracle) crashed(p *proc) {
	tm := o.s.knobs.Timing
	m := map[int64]time.Time{}
	for id := range p.held {
		r := o.row(id)
		if r.State == runs.StateRunning && r.Owner == p.owner {
			m[id] = r.ExpiresAt.Add(tm.Poll + tm.Skew)
		}
	}
	o.dead[p.owner] = m
}

// reclaimed checks one reclaim (the run as it was before and after).
func (o *oracle) reclaimed(before, after *driver.Run) {
	tm := o.s.knobs.Timing
	now := o.s.storeClock.Now()
	o.reclaims++
	strand := now.Sub(before.ExpiresAt.Add(-tm.Lease))
	o.strands = append(o.strands, strand)
	if p := o.s.procByOwner(before.Owner); p != nil && p.up && p.owner == before.Owner && p.held[before.ID] &&
		o.s.loop.now-p.lastFault > tm.Lease {
		o.fail(InvLive, "run %d reclaimed from %s, alive with no fault for %v (> T_lease %v)", before.ID, before.Owner, o.s.loop.now-p.lastFault, tm.Lease)
	}
	if dl, ok := o.dead[before.Owner][before.ID]; ok {
		// The bound counts from the last renewal the store committed,
		// which may be one that landed after the crash: use the expiry
		// the reclaim found.
		bound := before.ExpiresAt.Add(tm.Poll + tm.Skew)
		if now.After(bound) {
			o.fail(InvDead, "run %d of dead %s reclaimed %v after its last renewal (> T_lease+P+S = %v)", before.ID, before.Owner, strand, tm.Lease+tm.Poll+tm.Skew)
		}
		_ = dl
		delete(o.dead[before.Owner], before.ID)
	}
	_ = after
}

// final checks the end state: every run accounted for, every acknowledged
// event present once and in order, no dead holder's run left unreclaimed.
func (o *oracle) final() {
	s := o.s
	now := s.storeClock.Now()
	for id := int64(1); id <= int64(s.knobs.Runs); id++ {
		r := o.row(id)
		switch r.State {
		case runs.StateCompleted:
		case runs.StateFailed:
			if r.Reason == "" {
				o.fail(InvAccounted, "run %d failed without a reason", id)
			}
		case runs.StateRunning:
			p := s.procByOwner(r.Owner)
			if p == nil || !p.up || p.owner != r.Owner || !p.held[id] || !r.ExpiresAt.After(now) {
				o.fail(InvAccounted, "run %d still running under %s (fence %d, expires %s) with no live holder at the end", id, r.Owner, r.Fence, r.ExpiresAt.Format(time.RFC3339Nano))
			}
		default:
			o.fail(InvAccounted, "run %d ended the calm phase %s (reason %q)", id, r.State, r.Reason)
		}
	}
	for owner, m := range o.dead {
		for id, dl := range m {
			if now.After(dl) {
				if r := o.row(id); r.State == runs.StateRunning && r.Owner == owner {
					o.fail(InvDead, "run %d of dead %s never reclaimed (due by %s)", id, owner, dl.Format(time.RFC3339Nano))
				}
			}
		}
	}
	byRun := map[int64][]ackedEvent{}
	for _, e := range o.acked {
		byRun[e.run] = append(byRun[e.run], e)
	}
	for id, acked := range byRun {
		// Answers may arrive out of order; the store's order is (fence, seq).
		slices.SortFunc(acked, func(a, b ackedEvent) int {
			if a.fence != b.fence {
				return cmp.Compare(a.fence, b.fence)
			}
			return cmp.Compare(a.seq, b.seq)
		})
		evs, err := s.store.RunEventList(context.Background(), &driver.RunEventListParams{RunID: id, Limit: 10000})
		if err != nil {
			panic(err)
		}
		pos := map[ackedEvent]int{}
		for i, e := range evs {
			k := ackedEvent{e.RunID, e.Fence, e.Seq}
			if _, dup := pos[k]; dup {
				o.fail(InvEvents, "event run %d fence %d seq %d stored twice", e.RunID, e.Fence, e.Seq)
			}
			pos[k] = i
		}
		last := -1
		for _, a := range acked {
			i, ok := pos[a]
			if !ok {
				o.fail(InvEvents, "acknowledged event run %d fence %d seq %d is missing", a.run, a.fence, a.seq)
				continue
			}
			if i < last {
				o.fail(InvEvents, "acknowledged event run %d fence %d seq %d is out of order", a.run, a.fence, a.seq)
			}
			last = i
		}
	}
}
