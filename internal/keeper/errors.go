package keeper

import "github.com/leasehold/leasehold/lease"

// The keeper's refusals are defined in package lease, so a user matches
// them from the public API (errors.As with *leasehold.RunwayError).
type (
	// RunwayError is the gate's refusal (lease.RunwayError).
	RunwayError = lease.RunwayError
	// LostError is why a lease was given up (lease.LostError).
	LostError = lease.LostError
)
