package leasehold

import (
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// Sentinel errors; match them with errors.Is. Each is documented in package
// lease, where every layer shares them.
var (
	ErrNotFound      = lease.ErrNotFound
	ErrConflict      = lease.ErrConflict
	ErrInvalid       = lease.ErrInvalid
	ErrFenced        = lease.ErrFenced
	ErrNotHolder     = lease.ErrNotHolder
	ErrLeaseExpired  = lease.ErrLeaseExpired
	ErrSeenBehind    = lease.ErrSeenBehind
	ErrLeaseHeld     = lease.ErrLeaseHeld
	ErrSchemaTooNew  = lease.ErrSchemaTooNew
	ErrCorrupt       = lease.ErrCorrupt
	ErrInvalidTiming = lease.ErrInvalidTiming // also matches ErrInvalid
	// ErrEffectDuration: an effect's declared maximum duration is not
	// positive or longer than the gate could ever pass (also matches
	// ErrInvalid).
	ErrEffectDuration = lease.ErrEffectDuration
	ErrLeaseRunway    = lease.ErrLeaseRunway
	ErrLeaseLost      = lease.ErrLeaseLost
	ErrClosed         = lease.ErrClosed
)

// Typed errors that unwrap to the sentinels above.
type (
	// RefusedError is a write the lease rules refused; it names the lease
	// in force.
	RefusedError = journal.RefusedError
	// InputError is input refused before anything was written.
	InputError = journal.InputError
	// Violation is the first entry of a journal that failed verification.
	Violation = journal.Violation
	// LineError is a JSONL line that could not be read.
	LineError = journal.LineError
)
