package world

import (
	"time"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// holderState is what one holder generation knows of its world's lease.
// The decisions below are pure functions of it, the head observed and the
// holder's own clock reading; Holder (holder.go) only carries them out.
type holderState struct {
	// looked is set by the first observation of the head, which fixes
	// startEpoch: the epoch current when this generation first looked.
	looked     bool
	startEpoch int64
	// epoch is the epoch this generation holds (adopted and not dropped);
	// 0 when none. grantedAt is the position of the entry that started it.
	epoch     int64
	grantedAt int64
	// given is the highest epoch this generation handed off, or tried to:
	// it is never adopted again.
	given int64
	// renewed: a renewal of epoch was confirmed since it was adopted; sent
	// is the send time of that write, the origin of the runway.
	renewed bool
	sent    time.Time
}

// mayAdopt reports whether a generation in state s may adopt the epoch of
// head w. Three rules, each closing a hazard:
//
//   - w names this holder. Holding is the store's word, never a guess.
//   - w.Epoch > s.startEpoch: the epoch was granted or handed to this name
//     after this generation first looked. A holder restarted under the same
//     name (the ABA case) must not take over the epoch of its dead
//     predecessor, whose appends may still be in flight and would interleave
//     with its own under one (holder, epoch) the store cannot tell apart.
//     An epoch already current at the first look may be that one, so it is
//     never adopted: the generation waits for the next grant (the expiry
//     sweep's, or a handoff).
//   - w.Epoch > s.given: not an epoch this generation handed off. If the
//     handoff's answer was lost, the head may still name this holder while
//     the handoff is in flight and lands later; re-adopting would let an
//     append race the handoff (the Promela model's world-sim-readopt).
func mayAdopt(s holderState, me string, w journal.State) bool {
	return s.epoch == 0 && w.Holder == me && w.Epoch > max(s.startEpoch, s.given)
}

// observe folds a head read into s: the first read fixes startEpoch; a held
// epoch the head no longer shows as this holder's is dropped (revoked,
// swept, handed off, or never ours to begin with); then, holding none, the
// head's epoch is adopted if mayAdopt allows. adopted reports an adoption:
// the caller must renew synchronously before the first append under it.
func observe(s holderState, me string, w journal.State) (next holderState, adopted bool) {
	if !s.looked {
		s.looked, s.startEpoch = true, w.Epoch
	}
	if s.epoch != 0 && (w.Epoch != s.epoch || w.Holder != me) {
		s = dropEpoch(s)
	}
	if mayAdopt(s, me, w) {
		s.epoch, s.grantedAt = w.Epoch, w.GrantedAt
		// A new epoch has no runway until a renewal under it is
		// confirmed: the grant's own expiry was set by a write another
		// party sent at a time this holder does not know.
		s.renewed, s.sent = false, time.Time{}
		return s, true
	}
	return s, false
}

// dropEpoch forgets the held epoch; what was given away stays given.
func dropEpoch(s holderState) holderState {
	s.epoch, s.grantedAt, s.renewed, s.sent = 0, 0, false, time.Time{}
	return s
}

// runway is the time the holder may still act under its epoch at now
// (SPEC §1): (t_send + T_lease) − now − S from the send of the last
// confirmed renewal, and zero with no epoch or no renewal confirmed since
// adoption.
func runway(s holderState, now time.Time, t lease.Timing) time.Duration {
	if s.epoch == 0 || !s.renewed {
		return 0
	}
	return lease.Runway(s.sent, now, t)
}

// appendRefusal is the holder's own check before it sends an append: why it
// may not send one at now with its mirror replayed through seen, or "" if
// it may. The store re-checks the epoch, holder, expiry and seen position
// under its lock; this check keeps a holder that knows it cannot pass from
// sending (and from journaling an append.rejected), and adds the one thing
// the store cannot see: the holder's own runway, on its own clock.
func appendRefusal(s holderState, now time.Time, t lease.Timing, seen int64) Refusal {
	switch {
	case s.epoch == 0:
		return RefusedNoEpoch
	case !s.renewed:
		return RefusedNotRenewed
	case runway(s, now, t) <= 0:
		return RefusedNoRunway
	case seen < s.grantedAt:
		return RefusedSeenBehind
	}
	return ""
}

// renewRefusal is why the holder may not send a renewal or a handoff: only
// under an adopted epoch.
func renewRefusal(s holderState) Refusal {
	if s.epoch == 0 {
		return RefusedNoEpoch
	}
	return ""
}

// dropsEpoch reports whether a store refusal means the epoch is gone for
// good: it is not current (fenced or revoked), not this holder's, or
// expired on the store clock. A seen-behind or invalid-input refusal says
// nothing about the lease and keeps it.
func dropsEpoch(err error) bool {
	return errorsIsAny(err, lease.ErrFenced, lease.ErrNotHolder, lease.ErrLeaseExpired)
}
