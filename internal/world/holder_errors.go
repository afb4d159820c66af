package world

import (
	"errors"
	"fmt"

	"github.com/leasehold/leasehold/lease"
)

// Refusal says why a Holder refused a write itself, without sending it.
type Refusal string

// The holder's own refusals. Each unwraps to the shared sentinel a caller
// matches with errors.Is.
const (
	// RefusedNoEpoch: the holder holds no adopted epoch (never granted one,
	// dropped it, or handed it off). Unwraps to lease.ErrNotHolder.
	RefusedNoEpoch Refusal = "no_epoch"
	// RefusedNotRenewed: an epoch was adopted but no renewal under it has
	// been confirmed yet, so it has no runway (SPEC §4: a synchronous
	// renewal before the first append). Unwraps to lease.ErrLeaseRunway.
	RefusedNotRenewed Refusal = "not_renewed"
	// RefusedNoRunway: the runway from the last confirmed renewal's send is
	// used up on the holder's own clock. Unwraps to lease.ErrLeaseRunway.
	RefusedNoRunway Refusal = "no_runway"
	// RefusedSeenBehind: the caller's mirror has not replayed through the
	// entry that granted the epoch. Unwraps to lease.ErrSeenBehind.
	RefusedSeenBehind Refusal = "seen_behind"
)

// Sentinel is the shared sentinel r unwraps to.
func (r Refusal) Sentinel() error {
	switch r {
	case RefusedNoEpoch:
		return lease.ErrNotHolder
	case RefusedNotRenewed, RefusedNoRunway:
		return lease.ErrLeaseRunway
	case RefusedSeenBehind:
		return lease.ErrSeenBehind
	}
	return lease.ErrInvalid
}

// HolderError is a write a Holder refused itself: nothing reached the store.
type HolderError struct {
	Op     string // "append", "renew", "handoff"
	World  string
	Holder string
	Epoch  int64 // the epoch held, 0 if none
	Reason Refusal
}

func (e *HolderError) Error() string {
	return fmt.Sprintf("%s to world %s by %q under epoch %d refused by the holder: %s", e.Op, e.World, e.Holder, e.Epoch, e.Reason)
}

// Unwrap returns the shared sentinel for e.Reason.
func (e *HolderError) Unwrap() error { return e.Reason.Sentinel() }

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
