package journal

import (
	"fmt"
	"math"
	"time"
)

// ExpiryCond is the expiry check a conditional write re-asserts against the
// store's clock.
type ExpiryCond uint8

const (
	ExpiryAny  ExpiryCond = iota // no expiry check
	ExpiryLive                   // expires_at > now: the lease is live
	ExpiryPast                   // expires_at <= now: the lease has expired (sweep)
)

// Cond is the precondition of a plan, written by the driver into the WHERE of
// the one conditional UPDATE of the world's head row that commits the plan:
//
//	WHERE id = $world AND position = $Position AND epoch = $Epoch
//	  [AND holder = $Holder]                   -- when CheckHolder
//	  [AND expires_at > $Now | <= $Now]        -- ExpiryLive | ExpiryPast
//	  AND granted_position <= $MaxGrantedAt
//
// If the UPDATE matches no row the transaction writes nothing. Position makes
// the write a compare-and-swap on the whole head; the epoch, holder and
// expiry terms are the fence itself, stated where the store enforces it.
type Cond struct {
	Position     int64
	Epoch        int64
	CheckHolder  bool
	Holder       string
	Expiry       ExpiryCond
	Now          time.Time
	MaxGrantedAt int64
}

// Plan is a lease change or a batch of appends, computed from the locked
// head and the store's clock: the entries to insert, the head they lead to,
// and the condition under which the store may commit them.
type Plan struct {
	Cond    Cond
	Before  State
	Entries []Entry
	After   State
	// Rejected lists holders for which an append.rejected entry is in
	// Entries; the driver records (world, After.Epoch, holder) so that no
	// second one is journaled in this epoch.
	Rejected []string
}

// Empty reports whether the plan writes nothing.
func (p *Plan) Empty() bool { return len(p.Entries) == 0 }

// StoreNow is the store time a plan is built at: the store's clock reading,
// truncated to microseconds, and never before the last entry's time, so
// store times in a journal never decrease even if the store clock steps back.
func StoreNow(s State, now time.Time) time.Time {
	now = NormalizeTime(now)
	if now.Before(s.LastTime) {
		return s.LastTime
	}
	return now
}

type builder struct {
	plan Plan
	s    State
	now  time.Time
	// verified: the signed batch being added was verified whole by
	// planSigned (fold's verified).
	verified bool
}

func newBuilder(s State, now time.Time) *builder {
	now = StoreNow(s, now)
	before := s
	before.EpochFloor = 0 // the store's, not the journal's
	return &builder{s: s, now: now, plan: Plan{Before: before, Cond: Cond{
		Position: s.Position, Epoch: s.Epoch, Now: now, MaxGrantedAt: math.MaxInt64,
	}}}
}

// add seals an entry after the current state and folds it in. The fold is
// the definition of lease state, so a plan can only contain entries the
// audit will accept; an error here is a bug in the planner.
func (b *builder) add(kind Kind, holder string, epoch int64, key string, payload []byte) {
	b.addSigned(kind, holder, epoch, key, payload, nil)
}

func (b *builder) addSigned(kind Kind, holder string, epoch int64, key string, payload, sig []byte) {
	e := Entry{World: b.s.World, Position: b.s.Position + 1, Epoch: epoch, Kind: kind, Holder: holder,
		Key: key, Payload: payload, StoreTime: b.now, PrevHash: b.s.LastHash, Signature: sig}
	Seal(&e)
	n, err := fold(b.s, &e, true, b.verified)
	if err != nil {
		panic(fmt.Sprintf("journal planner built an entry its own fold refuses: %v", err))
	}
	b.s = n
	b.plan.Entries = append(b.plan.Entries, e)
}

func (b *builder) done() Plan {
	b.plan.After = b.s
	b.plan.After.EpochFloor = 0
	return b.plan
}

// MaxTerm bounds a lease term.
const MaxTerm = 24 * time.Hour

// ValidateTerm checks a lease term: positive and at most MaxTerm.
func ValidateTerm(term time.Duration) error {
	if term <= 0 || term > MaxTerm {
		return invalid("term", "%s must be positive and at most %s", term, MaxTerm)
	}
	return nil
}

// NormalizeTerm is the form a term is kept in: whole milliseconds,
// rounded up (never shortened), as the grant, renewal and handoff
// payloads journal it (term_ms). A world's default term is stored in this
// form too, so the head row says what its journal says: a term of 1ns
// was journaled as 1 ms but kept as a default term cut to microseconds,
// 0 — a world the sweep could never re-grant, and whose export no import
// would take.
func NormalizeTerm(term time.Duration) time.Duration {
	return time.Duration(termMS(term)) * time.Millisecond
}

func validTerm(term time.Duration) error { return ValidateTerm(term) }

// PlanCreate plans a new world whose first entry grants epoch 1 to home.
func PlanCreate(world, home string, term time.Duration, now time.Time) (Plan, error) {
	return PlanCreateAbove(world, home, term, now, 0)
}

// PlanCreateAbove is PlanCreate for a store that names an epoch floor
// (State.EpochFloor, epoch.go): the first grant starts floor+1 when floor
// is a positive multiple of EpochBand, else epoch 1.
func PlanCreateAbove(world, home string, term time.Duration, now time.Time, floor int64) (Plan, error) {
	if err := ValidateID("world", world); err != nil {
		return Plan{}, err
	}
	if err := ValidateID("home", home); err != nil {
		return Plan{}, err
	}
	if err := validTerm(term); err != nil {
		return Plan{}, err
	}
	b := newBuilder(State{World: world, EpochFloor: floor}, now)
	b.grant(home, term)
	return b.done(), nil
}

func (b *builder) grant(holder string, term time.Duration) {
	epoch := nextEpoch(b.s)
	b.add(KindGranted, holder, epoch, "", mustMarshal(Granted{Holder: holder, Epoch: epoch,
		TermMS: termMS(term), GrantedAtPosition: b.s.Position + 1}))
}

// PlanGrant plans lease.granted to holder. The caller names the epoch it
// believes current; the grant is refused while anyone holds the lease.
func PlanGrant(s State, now time.Time, holder string, epoch int64, term time.Duration) (Plan, error) {
	if err := ValidateID("holder", holder); err != nil {
		return Plan{}, err
	}
	if err := validTerm(term); err != nil {
		return Plan{}, err
	}
	switch {
	case epoch != s.Epoch:
		return Plan{}, s.refused("grant", holder, epoch, ReasonStaleEpoch)
	case s.Held():
		return Plan{}, s.refused("grant", holder, epoch, ReasonHeld)
	}
	b := newBuilder(s, now)
	b.plan.Cond.CheckHolder, b.plan.Cond.Holder = true, ""
	b.grant(holder, term)
	return b.done(), nil
}

// PlanRenew plans lease.renewed: the holder of the live current epoch
// extends its expiry to store time + term. An expired lease is never revived.
func PlanRenew(s State, now time.Time, holder string, epoch int64, term time.Duration) (Plan, error) {
	if err := validTerm(term); err != nil {
		return Plan{}, err
	}
	b := newBuilder(s, now)
	if r := s.writeRefusal(holder, epoch, b.now); r != "" {
		return Plan{}, s.refused("renew", holder, epoch, r)
	}
	b.plan.Cond.CheckHolder, b.plan.Cond.Holder, b.plan.Cond.Expiry = true, holder, ExpiryLive
	b.add(KindRenewed, holder, epoch, "", mustMarshal(Renewed{Epoch: epoch, TermMS: termMS(term)}))
	return b.done(), nil
}

// PlanRevoke plans an operator's lease.revoked of the current epoch.
func PlanRevoke(s State, now time.Time, epoch int64, reason string) (Plan, error) {
	if reason == "" || reason == ReasonExpiry {
		return Plan{}, invalid("reason", "%q: an operator revoke needs a reason other than %q", reason, ReasonExpiry)
	}
	// The one reason rule (reason.go), as Cancel's: refused, never
	// journaled with its bad bytes replaced.
	if err := ValidateReason("reason", reason); err != nil {
		return Plan{}, err
	}
	switch {
	case epoch != s.Epoch:
		return Plan{}, s.refused("revoke", "", epoch, ReasonStaleEpoch)
	case !s.Held():
		return Plan{}, s.refused("revoke", "", epoch, ReasonRevoked)
	}
	b := newBuilder(s, now)
	b.plan.Cond.CheckHolder, b.plan.Cond.Holder = true, s.Holder
	b.revoke(reason)
	return b.done(), nil
}

func (b *builder) revoke(reason string) {
	b.add(KindRevoked, "", b.s.Epoch, "", mustMarshal(Revoked{Holder: b.s.Holder, Epoch: b.s.Epoch, Reason: reason}))
}

// PlanHandoff plans lease.handed_off from the live current holder to another
// holder, starting epoch+1 (or the store's floor+1, epoch.go) at this
// entry's position.
func PlanHandoff(s State, now time.Time, from, to string, epoch int64, term time.Duration) (Plan, error) {
	if err := ValidateID("to", to); err != nil {
		return Plan{}, err
	}
	if to == from {
		return Plan{}, invalid("to", "%q already holds the lease", to)
	}
	if err := validTerm(term); err != nil {
		return Plan{}, err
	}
	b := newBuilder(s, now)
	if r := s.writeRefusal(from, epoch, b.now); r != "" {
		return Plan{}, s.refused("handoff", from, epoch, r)
	}
	b.plan.Cond.CheckHolder, b.plan.Cond.Holder, b.plan.Cond.Expiry = true, from, ExpiryLive
	next := nextEpoch(s)
	b.add(KindHandedOff, to, next, "", mustMarshal(HandedOff{From: from, To: to, Epoch: next, TermMS: termMS(term)}))
	return b.done(), nil
}

// PlanSweep plans the expiry sweep of one world: if the lease is held and
// expired at store time now, lease.revoked{reason: expiry} then
// lease.granted{holder: home, epoch+1}, committed together. ok is false when
// there is nothing to sweep.
func PlanSweep(s State, now time.Time, home string, term time.Duration) (p Plan, ok bool) {
	b := newBuilder(s, now)
	if !s.Held() || !s.Expired(b.now) || validTerm(term) != nil || ValidateID("home", home) != nil {
		return Plan{}, false
	}
	b.plan.Cond.CheckHolder, b.plan.Cond.Holder, b.plan.Cond.Expiry = true, s.Holder, ExpiryPast
	b.revoke(ReasonExpiry)
	b.grant(home, term)
	return b.done(), true
}

// AppendOutcome is the answer to one AppendRequest of a batch: the position
// it was written at, or why it was refused.
type AppendOutcome struct {
	Position int64
	Err      error
}

// KeyLookup finds, in the store, the position of the entry a world's key
// was appended at (under the world's lock, in the append's transaction).
type KeyLookup func(key string) (position int64, ok bool)

// PlanAppend plans a batch of appends to one world, in arrival order, with
// the keys of earlier batches unknown: PlanAppendKeyed with no lookup.
// Drivers use PlanAppendKeyed.
func PlanAppend(s State, now time.Time, reqs []AppendRequest, alreadyRejected func(holder string) bool) (Plan, []AppendOutcome) {
	return PlanAppendKeyed(s, now, reqs, alreadyRejected, nil)
}

// PlanAppendKeyed plans a batch of appends to one world, in arrival order.
//
// The key rule (SPEC §4: a retried command is applied once): within a
// world, an append whose non-empty Key was already appended — earlier in
// this batch, or in the store, as appended(key) reports — is answered with
// the position of that first entry and writes nothing. The key alone
// decides (the retry's kind and payload are not compared), in any epoch and
// by any holder: a command applied before a handoff must not apply again
// after it, so the key's scope is the world, and it is checked before the
// lease rule. Keys are kept as long as the journal: forever. A request that
// was refused recorded nothing, so its key stays free. The empty key is no
// key.
//
// Every other request is checked with CheckAppend against the lease in
// force (appends do not change it). Refusals for epoch, holder or expiry
// add an append.rejected entry unless alreadyRejected(holder) says one was
// journaled for that holder in the current epoch, or this batch has one.
// Each request is validated (and a copy of its payload normalized) with
// ValidateAppend first; an invalid one is answered with its *InputError and
// writes nothing. The caller's requests are not modified.
func PlanAppendKeyed(s State, now time.Time, reqs []AppendRequest, alreadyRejected func(holder string) bool, appended KeyLookup) (Plan, []AppendOutcome) {
	if Signed(reqs) {
		return planSigned(s, now, reqs, alreadyRejected, appended)
	}
	b := newBuilder(s, now)
	out := make([]AppendOutcome, len(reqs))
	marked := map[string]bool{}
	keys := map[string]int64{} // keys appended by this batch
	accepted := false
	for i := range reqs {
		req := reqs[i] // a copy: validation normalizes the payload
		r := &req
		if err := ValidateAppend(r); err != nil {
			out[i].Err = err
			continue
		}
		if r.Key != "" {
			if pos, ok := keys[r.Key]; ok {
				out[i].Position = pos
				continue
			}
			if appended != nil {
				if pos, ok := appended(r.Key); ok {
					keys[r.Key] = pos
					out[i].Position = pos
					continue
				}
			}
		}
		reason := CheckAppend(s, b.now, r)
		if reason == "" && s.HolderKey != nil {
			reason = ReasonBadSignature // the holder signs: an unsigned append is not its
		}
		if reason == "" {
			accepted = true
			b.plan.Cond.MaxGrantedAt = min(b.plan.Cond.MaxGrantedAt, r.SeenPosition)
			b.add(r.Kind, r.Holder, r.Epoch, r.Key, r.Payload)
			out[i].Position = b.s.Position
			if r.Key != "" {
				keys[r.Key] = b.s.Position
			}
			continue
		}
		out[i].Err = s.refused("append", r.Holder, r.Epoch, reason)
		if reason.Journaled() && !marked[r.Holder] && !alreadyRejected(r.Holder) {
			marked[r.Holder] = true
			b.plan.Rejected = append(b.plan.Rejected, r.Holder)
			b.add(KindRejected, s.Holder, s.Epoch, "", mustMarshal(Rejected{Holder: r.Holder, Epoch: r.Epoch, Reason: reason}))
		}
	}
	if accepted {
		b.plan.Cond.CheckHolder, b.plan.Cond.Holder, b.plan.Cond.Expiry = true, s.Holder, ExpiryLive
	}
	return b.done(), out
}

// CheckRenew is PlanRenew's rule without the write: whether holder still
// holds epoch, live, at store time now. It returns "" when it does. A
// world keeper's drain uses it to confirm the leases it does not extend.
func CheckRenew(s State, now time.Time, holder string, epoch int64) Reason {
	return s.writeRefusal(holder, epoch, StoreNow(s, now))
}
