package journal

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// State is the lease state of a world after some prefix of its journal. It
// is derived purely by Fold; a driver's materialized head row holds the same
// fields and must agree with the fold at every position.
type State struct {
	World     string
	Position  int64     // last position; 0 for an empty journal
	LastHash  []byte    // Hash of the entry at Position
	LastTime  time.Time // StoreTime of the entry at Position
	Epoch     int64     // current epoch; 0 before the first grant
	Holder    string    // current holder; "" when nobody holds the lease
	Term      time.Duration
	ExpiresAt time.Time // on the store clock; meaningful only while Holder != ""
	GrantedAt int64     // position of the entry that started Epoch
	// HolderKey is the ed25519 public key the holder of Epoch signs with,
	// from the grant or handoff that started it (journal/sign.go); nil: the
	// holder had no registered key, and its entries are unsigned.
	HolderKey []byte
	// SignFrom and SignDigest follow a signed batch mid-way: the first
	// position not yet covered by a signature, and the batch digest so
	// far. Both are zero at every head a store commits (a batch commits
	// whole); only a fold in the middle of one sees them set.
	SignFrom   int64
	SignDigest []byte
	// EpochFloor is not part of the fold and never journaled: a store that
	// can lose commits in a failover sets it on the head it plans from, and
	// the next grant or handoff starts past it (epoch.go). Zero in every
	// folded state and in every plan's Before and After.
	EpochFloor int64
}

// Held reports whether some holder holds the lease (it may have expired).
func (s State) Held() bool { return s.Holder != "" }

// Expired reports whether the lease has expired at store time now. A lease is
// live while now < ExpiresAt, the same comparison the drivers write in SQL
// (expires_at > $now).
func (s State) Expired(now time.Time) bool { return !now.Before(s.ExpiresAt) }

// Equal reports whether two states agree in every field.
func (s State) Equal(o State) bool {
	return s.World == o.World && s.Position == o.Position && bytes.Equal(s.LastHash, o.LastHash) &&
		s.LastTime.Equal(o.LastTime) && s.Epoch == o.Epoch && s.Holder == o.Holder &&
		s.Term == o.Term && s.ExpiresAt.Equal(o.ExpiresAt) && s.GrantedAt == o.GrantedAt &&
		bytes.Equal(s.HolderKey, o.HolderKey) && s.SignFrom == o.SignFrom && bytes.Equal(s.SignDigest, o.SignDigest)
}

func (s State) String() string {
	return fmt.Sprintf("world=%s position=%d epoch=%d holder=%q expires=%s granted_at=%d",
		s.World, s.Position, s.Epoch, s.Holder, s.ExpiresAt.Format(time.RFC3339Nano), s.GrantedAt)
}

// Violation is an entry that cannot follow the state before it: a broken
// hash chain, a write under a non-current epoch, a lease change that the
// store could not have granted. It unwraps to lease.ErrCorrupt.
type Violation struct {
	World    string
	Position int64
	Rule     string // short machine-readable name, e.g. "hash_chain", "stale_epoch"
	Detail   string
}

func (v *Violation) Error() string {
	return fmt.Sprintf("journal %s position %d: %s: %s", v.World, v.Position, v.Rule, v.Detail)
}

// Unwrap makes errors.Is(v, lease.ErrCorrupt) true.
func (v *Violation) Unwrap() error { return lease.ErrCorrupt }

// Fold applies e to s and returns the next state, or a *Violation naming why
// e cannot follow s. It checks the chain (position, previous hash, hash, non
// decreasing store time) and the lease rules of SPEC §4. Fold is the single
// definition of lease state; the planner builds every entry through it.
func Fold(s State, e *Entry) (State, error) { return fold(s, e, false, false) }

// fold is Fold; sealed skips the two checks that only recompute what the
// planner's builder has just computed itself — the entry's hash (Seal) and
// its payload's canonical form (ValidateAppend, or json.Marshal of a fixed
// struct) — and are the two costliest per entry. verified (only with
// sealed) skips the third: the batch signature, which planSigned has just
// verified over exactly these entries (VerifyBatch), is not chained and
// verified again entry by entry; its bookkeeping (SignFrom) is kept, and
// the state after the batch's signed last entry is the same. Every other
// rule is checked as for any entry, and every read-back audit checks all
// of them.
func fold(s State, e *Entry, sealed, verified bool) (State, error) {
	bad := func(rule, format string, args ...any) (State, error) {
		return s, &Violation{World: e.World, Position: e.Position, Rule: rule, Detail: fmt.Sprintf(format, args...)}
	}
	if s.Position > 0 && e.World != s.World {
		return bad("world", "entry of world %q in journal of %q", e.World, s.World)
	}
	if e.Position != s.Position+1 {
		return bad("position", "expected position %d", s.Position+1)
	}
	if !bytes.Equal(e.PrevHash, s.LastHash) {
		return bad("hash_chain", "prev_hash %x does not match hash %x of position %d", e.PrevHash, s.LastHash, s.Position)
	}
	if !sealed && !HashValid(e) {
		return bad("hash", "hash %x does not match the entry's canonical encoding", e.Hash)
	}
	if e.StoreTime.Before(s.LastTime) {
		return bad("store_time", "store time %s is before position %d's %s", e.StoreTime.Format(time.RFC3339Nano), s.Position, s.LastTime.Format(time.RFC3339Nano))
	}
	if err := ValidateKind(e.Kind, true); err != nil {
		return bad("kind", "%v", err)
	}
	// Identifiers are checked here too, so an imported journal cannot bring
	// in what the API would refuse.
	if err := ValidateID("world", e.World); err != nil {
		return bad("world", "%v", err)
	}
	if e.Holder != "" {
		if err := ValidateID("holder", e.Holder); err != nil {
			return bad("holder", "%v", err)
		}
	}
	if err := ValidateKey(e.Key); err != nil {
		return bad("key", "%v", err)
	}
	// Payloads are stored in their canonical compact form; anything else
	// could not be exported and re-imported byte for byte.
	if !sealed { // a sealed entry's payload is the builder's own, already canonical
		if norm, err := NormalizePayload(e.Payload); err != nil {
			return bad("payload", "%v", err)
		} else if !bytes.Equal(norm, e.Payload) {
			return bad("payload", "payload is not compact canonical JSON")
		}
	}
	if s.SignFrom != 0 && e.Kind.IsSystem() {
		return bad("unsigned", "entries from position %d are covered by no signature", s.SignFrom)
	}
	n := s
	n.World, n.Position, n.LastHash, n.LastTime = e.World, e.Position, e.Hash, e.StoreTime
	now := e.StoreTime
	if e.Kind.IsSystem() && len(e.Signature) != 0 {
		return bad("signature", "%s is written by the store and carries no signature", e.Kind)
	}

	switch e.Kind {
	case KindGranted:
		var p Granted
		if err := decodeStrict(e.Payload, &p); err != nil {
			return bad("payload", "lease.granted: %v", err)
		}
		switch {
		case s.Held():
			return bad("grant_while_held", "granted to %q while %q holds epoch %d", p.Holder, s.Holder, s.Epoch)
		case !validNextEpoch(s.Epoch, p.Epoch):
			return bad("stale_epoch", "granted epoch %d, expected %d (or the first of a later band of %d)", p.Epoch, s.Epoch+1, EpochBand)
		case p.Holder == "" || !termPayloadValid(p.TermMS):
			return bad("payload", "lease.granted needs a holder and a positive term")
		case p.GrantedAtPosition != e.Position:
			return bad("payload", "granted_at_position %d is not the entry's position", p.GrantedAtPosition)
		}
		key, err := DecodeKey(p.Key)
		if err != nil {
			return bad("payload", "lease.granted: %v", err)
		}
		n.Epoch, n.Holder, n.Term, n.GrantedAt, n.HolderKey = p.Epoch, p.Holder, termOf(p.TermMS), e.Position, key
		n.ExpiresAt = now.Add(n.Term)
	case KindRenewed:
		var p Renewed
		if err := decodeStrict(e.Payload, &p); err != nil {
			return bad("payload", "lease.renewed: %v", err)
		}
		if reason := s.writeRefusal(e.Holder, p.Epoch, now); reason != "" {
			return bad(string(reason), "renewal by %q under epoch %d refused (current %s)", e.Holder, p.Epoch, s)
		}
		if !termPayloadValid(p.TermMS) {
			return bad("payload", "lease.renewed needs a term in (0, %s]", MaxTerm)
		}
		n.Term = termOf(p.TermMS)
		n.ExpiresAt = now.Add(n.Term)
	case KindRevoked:
		var p Revoked
		if err := decodeStrict(e.Payload, &p); err != nil {
			return bad("payload", "lease.revoked: %v", err)
		}
		switch {
		case !s.Held():
			return bad("revoked", "revoke of epoch %d that nobody holds", p.Epoch)
		case p.Epoch != s.Epoch || p.Holder != s.Holder:
			return bad("stale_epoch", "revoke of %q epoch %d, current is %q epoch %d", p.Holder, p.Epoch, s.Holder, s.Epoch)
		case p.Reason == ReasonExpiry && !s.Expired(now):
			return bad("not_expired", "expiry revoke at %s before the lease expires at %s", now.Format(time.RFC3339Nano), s.ExpiresAt.Format(time.RFC3339Nano))
		}
		n.Holder, n.ExpiresAt, n.HolderKey = "", time.Time{}, nil
	case KindHandedOff:
		var p HandedOff
		if err := decodeStrict(e.Payload, &p); err != nil {
			return bad("payload", "lease.handed_off: %v", err)
		}
		if reason := s.writeRefusal(p.From, s.Epoch, now); reason != "" {
			return bad(string(reason), "handoff from %q refused (current %s)", p.From, s)
		}
		switch {
		case !validNextEpoch(s.Epoch, p.Epoch):
			return bad("stale_epoch", "handed off to epoch %d, expected %d (or the first of a later band of %d)", p.Epoch, s.Epoch+1, EpochBand)
		case p.To == "" || p.To == p.From || !termPayloadValid(p.TermMS):
			return bad("payload", "lease.handed_off needs a new holder other than %q and a positive term", p.From)
		}
		key, err := DecodeKey(p.Key)
		if err != nil {
			return bad("payload", "lease.handed_off: %v", err)
		}
		n.Epoch, n.Holder, n.Term, n.GrantedAt, n.HolderKey = p.Epoch, p.To, termOf(p.TermMS), e.Position, key
		n.ExpiresAt = now.Add(n.Term)
	case KindRejected:
		var p Rejected
		if err := decodeStrict(e.Payload, &p); err != nil {
			return bad("payload", "append.rejected: %v", err)
		}
		if !p.Reason.Journaled() {
			return bad("payload", "append.rejected with reason %q that is never journaled", p.Reason)
		}
	default: // a data entry: the append rule, minus seen_position (not journaled)
		if reason := s.writeRefusal(e.Holder, e.Epoch, now); reason != "" {
			return bad(string(reason), "%s by %q under epoch %d (current %s)", e.Kind, e.Holder, e.Epoch, s)
		}
		if verified {
			foldVerified(&n, s, e)
		} else if v := foldSignature(&n, s, e); v != "" {
			return bad("signature", "%s", v)
		}
	}
	if e.Epoch != n.Epoch || e.Holder != n.Holder {
		return bad("lease_fields", "entry says epoch %d holder %q, lease in force is epoch %d holder %q", e.Epoch, e.Holder, n.Epoch, n.Holder)
	}
	return n, nil
}

// writeRefusal is the part of the append rule the journal itself proves:
// the epoch is current, someone holds it, the writer is that holder, and the
// lease is live at store time now. It returns "" when the write may go in.
func (s State) writeRefusal(holder string, epoch int64, now time.Time) Reason {
	switch {
	case epoch != s.Epoch:
		return ReasonStaleEpoch
	case !s.Held():
		return ReasonRevoked
	case holder != s.Holder:
		return ReasonNotHolder
	case s.Expired(now):
		return ReasonExpired
	}
	return ""
}

// foldSignature applies the signature rule (journal/sign.go) to a data
// entry: in an epoch whose grant carries a key, every entry is covered by
// the signature on the last entry of its batch; in one without, no entry
// is signed. It returns what is wrong, "" when nothing is.
func foldSignature(n *State, s State, e *Entry) string {
	if s.HolderKey == nil {
		if len(e.Signature) != 0 {
			return fmt.Sprintf("signed entry under epoch %d, whose grant carries no key", s.Epoch)
		}
		return ""
	}
	var prev []byte
	if s.SignFrom != 0 {
		prev = s.SignDigest
	}
	d := chainDigest(prev, e)
	if len(e.Signature) == 0 {
		n.SignDigest = d
		if s.SignFrom == 0 {
			n.SignFrom = e.Position
		}
		return ""
	}
	from := cmp.Or(s.SignFrom, e.Position)
	if len(e.Signature) != SignatureSize || !ed25519.Verify(ed25519.PublicKey(s.HolderKey), d, e.Signature) {
		return fmt.Sprintf("the signature on positions %d..%d does not verify against %s's key %s (epoch %d)",
			from, e.Position, s.Holder, EncodeKey(s.HolderKey)[:16], s.Epoch)
	}
	n.SignFrom, n.SignDigest = 0, nil
	return ""
}

// foldVerified is foldSignature for an entry of a batch the planner has
// verified whole (fold's verified): the same SignFrom bookkeeping, no
// digest. Between the batch's entries SignDigest stays nil (nothing reads
// it: the signature is not checked again); after its signed last entry
// the state is foldSignature's.
func foldVerified(n *State, s State, e *Entry) {
	if len(e.Signature) == 0 {
		n.SignDigest = nil
		if s.SignFrom == 0 {
			n.SignFrom = e.Position
		}
		return
	}
	n.SignFrom, n.SignDigest = 0, nil
}
