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
)

// Journaled reports whether a refusal for this reason is recorded as an
// append.rejected entry (SPEC §4: those for epoch, holder or expiry).
func (r Reason) Journaled() bool {
	switch r {
	case ReasonStaleEpoch, ReasonRevoked, ReasonNotHolder, ReasonExpired:
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
	}
	return lease.ErrInvalid
}

// RefusedError is a write the lease rules refused. Nothing it asked for was
// written (an append.rejected entry may have been). It names the lease in
// force so a caller can find the current holder.
type RefusedError struct {
	Op            string // "append", "renew", "handoff", "grant", "revoke"
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
