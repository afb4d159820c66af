package journal

import (
	"fmt"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// Reason says why a write was refused.
type Reason string

// Refusal reasons. The first four are journaled as append.rejected (at most
// once per holder per epoch); the others are answered but not journaled.
const (
	ReasonStaleEpoch Reason = "stale_epoch" // epoch is not the current one (older or newer)
	ReasonRevoked    Reason = "revoked"     // epoch is current but was ended by lease.revoked
	ReasonNotHolder  Reason = "not_holder"  // epoch is current but held by someone else
	ReasonExpired    Reason = "expired"     // the holder's lease expired on the store clock
	ReasonSeenBehind Reason = "seen_behind" // seen_position below the grant of this epoch
	ReasonHeld       Reason = "held"        // a grant while the lease is still held
	// ReasonSeenAhead: seen_position is past the journal's head. No mirror
	// can have replayed a position that does not exist, so the claim is
	// false input, not a lease refusal: it matches lease.ErrInvalid (a
	// retry cannot succeed until the caller fixes its mirror), and it is
	// not journaled.
	ReasonSeenAhead Reason = "seen_ahead"
	// ReasonBadSignature: the holder's grant carries a key and the append
	// is unsigned, or its batch signature does not verify (journal/sign.go).
	// Journaled like the lease refusals: it is a write by the lease's
	// holder that the store refused.
	ReasonBadSignature Reason = "bad_signature"
	// ReasonMoved: a signed batch names positions that are not the ones it
	// would be written at (an entry landed since the holder read the head,
	// or a key in the batch was already appended). Nothing is written and
	// nothing journaled: the holder re-reads the head, signs again and
	// retries. It matches lease.ErrConflict.
	ReasonMoved Reason = "moved"
)

// Journaled reports whether a refusal for this reason is recorded as an
// append.rejected entry (SPEC §4: those for epoch, holder or expiry).
func (r Reason) Journaled() bool {
	switch r {
	case ReasonStaleEpoch, ReasonRevoked, ReasonNotHolder, ReasonExpired, ReasonBadSignature:
		return true
	}
	return false
}

// Sentinel maps a reason to the shared sentinel error it unwraps to.
func (r Reason) Sentinel() error {
	switch r {
	case ReasonStaleEpoch, ReasonRevoked:
		return lease.ErrFenced
	case ReasonNotHolder:
		return lease.ErrNotHolder
	case ReasonExpired:
		return lease.ErrLeaseExpired
	case ReasonSeenBehind:
		return lease.ErrSeenBehind
	case ReasonHeld:
		return lease.ErrLeaseHeld
	case ReasonSeenAhead:
		return lease.ErrInvalid
	case ReasonBadSignature:
		return lease.ErrBadSignature
	case ReasonMoved:
		return lease.ErrConflict
	}
	return lease.ErrInvalid
}

// RefusedError is a write the lease rules refused. Nothing it asked for was
// written (an append.rejected entry may have been). It names the lease in
// force so a caller can find the current holder.
type RefusedError struct {
	Op            string // "append", "renew", "handoff", "grant", "revoke", "snapshot"
	World         string
	Holder        string // who asked
	Epoch         int64  // the epoch they asked under
	Reason        Reason
	CurrentEpoch  int64
	CurrentHolder string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s to world %s by %q under epoch %d refused: %s (current: epoch %d held by %q)",
		e.Op, e.World, e.Holder, e.Epoch, e.Reason, e.CurrentEpoch, e.CurrentHolder)
}

// Unwrap returns the shared sentinel for e.Reason.
func (e *RefusedError) Unwrap() error { return e.Reason.Sentinel() }

func (s State) refused(op, holder string, epoch int64, r Reason) *RefusedError {
	return &RefusedError{Op: op, World: s.World, Holder: holder, Epoch: epoch, Reason: r,
		CurrentEpoch: s.Epoch, CurrentHolder: s.Holder}
}

// AppendRequest is one data entry a holder asks to append.
type AppendRequest struct {
	Holder       string
	Epoch        int64
	SeenPosition int64 // the last position the holder's mirror has replayed
	Kind         Kind
	Key          string
	Payload      []byte
	// Position and Signature sign the request (journal/sign.go): Position
	// is where the entry must land, and the last request of a signed batch
	// carries the signature over the whole batch. A batch is signed whole
	// or not at all (ValidateSignedBatch). Zero and nil: unsigned.
	Position  int64
	Signature []byte
}

// CheckAppend is the append rule of SPEC §4, evaluated against the lease in
// force s at store time now. An append is accepted only if its epoch is
// current, the lease is held by its holder and unexpired on the store clock,
// and its seen_position reaches the entry that granted the epoch (a holder
// whose mirror has not replayed its own grant has not seen the world it is
// writing to) but not past the head s.Position, the last position before
// the batch (ReasonSeenAhead). It returns "" when the append may go in.
//
// Drivers evaluate this on the locked head and then re-assert the same facts
// in the conditional write's SQL WHERE (see Cond), so a bug here cannot let a
// fenced write through.
func CheckAppend(s State, now time.Time, r *AppendRequest) Reason {
	if reason := s.writeRefusal(r.Holder, r.Epoch, now); reason != "" {
		return reason
	}
	if r.SeenPosition < s.GrantedAt {
		return ReasonSeenBehind
	}
	if r.SeenPosition > s.Position {
		return ReasonSeenAhead
	}
	return ""
}
