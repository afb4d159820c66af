package lease

import (
	"fmt"
	"time"
)

// Ref names one lease: a resource (a run's id) under one fence. A new
// claim of the same resource is a new Ref.
type Ref struct{ ID, Fence int64 }

// RunwayError is the gate's refusal. It unwraps to ErrLeaseRunway.
type RunwayError struct {
	Ref       Ref
	Needed    time.Duration // the effect's maximum duration plus the margin
	Available time.Duration // min(runway, D_stop - lag) after the synchronous flush
}

func (e *RunwayError) Error() string {
	return fmt.Sprintf("lease %d/%d: the gate needs %v of durable runway and has %v: effect refused, holder stopped",
		e.Ref.ID, e.Ref.Fence, e.Needed, e.Available)
}

// Unwrap returns ErrLeaseRunway.
func (e *RunwayError) Unwrap() error { return ErrLeaseRunway }

// LostError is why a holder's lease was given up: the store refused to
// renew it, or the holder stopped itself. It unwraps to ErrLeaseLost
// (and, for a store refusal, to the store's error when there is one).
type LostError struct {
	Ref      Ref
	SelfStop bool          // the durable lag reached D_stop
	Lag      time.Duration // the durable lag when it was given up
	Cause    error         // the store's refusal, if any
}

func (e *LostError) Error() string {
	if e.SelfStop {
		return fmt.Sprintf("lease %d/%d: self-stopped: no renewal confirmed for %v (durable lag >= D_stop)", e.Ref.ID, e.Ref.Fence, e.Lag)
	}
	if e.Cause != nil {
		return fmt.Sprintf("lease %d/%d lost: %v", e.Ref.ID, e.Ref.Fence, e.Cause)
	}
	return fmt.Sprintf("lease %d/%d lost: the renewal flush did not return its row (fenced out, expired or finished on the store)", e.Ref.ID, e.Ref.Fence)
}

// Unwrap returns ErrLeaseLost and the store's refusal.
func (e *LostError) Unwrap() []error {
	if e.Cause != nil {
		return []error{ErrLeaseLost, e.Cause}
	}
	return []error{ErrLeaseLost}
}
