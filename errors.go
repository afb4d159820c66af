package leasehold

import (
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// The sentinel errors, all of them: match them with errors.Is. The typed
// errors below and every error the library returns unwrap to one of these.
// They are declared once, in package lease, so every layer matches the same
// values.
var (
	// ErrNotFound: the world or run named does not exist.
	ErrNotFound = lease.ErrNotFound
	// ErrConflict: it exists already (a world created twice, an import into
	// an existing world), or an operator action the state does not allow
	// (cancel of a finished run, unblock of a run that is not blocked).
	ErrConflict = lease.ErrConflict
	// ErrInvalid: the input was refused before anything was written (size,
	// encoding, range, unknown queue, a bad configuration).
	ErrInvalid = lease.ErrInvalid
	// ErrFenced: the write carried a fence (epoch) that is not the current
	// one; nothing was changed.
	ErrFenced = lease.ErrFenced
	// ErrNotHolder: the epoch is current but the writer is not its holder.
	ErrNotHolder = lease.ErrNotHolder
	// ErrLeaseExpired: the holder's lease expired on the store's clock.
	ErrLeaseExpired = lease.ErrLeaseExpired
	// ErrSeenBehind: the holder has not replayed the journal through its
	// own grant.
	ErrSeenBehind = lease.ErrSeenBehind
	// ErrLeaseHeld: a grant was asked while the lease is held.
	ErrLeaseHeld = lease.ErrLeaseHeld
	// ErrSchemaTooNew: a newer binary migrated the store.
	ErrSchemaTooNew = lease.ErrSchemaTooNew
	// ErrNotMigrated: Config.SkipMigrate was set and the store's schema is
	// missing or behind: run `leasehold migrate` (or Client.Migrate).
	ErrNotMigrated = lease.ErrNotMigrated
	// ErrCorrupt: journal data failed verification (hash chain, encoding, a
	// torn line or tail, a write under a non-current epoch).
	ErrCorrupt = lease.ErrCorrupt
	// ErrInvalidTiming: a lease timing breaks SPEC §1 (also matches
	// ErrInvalid).
	ErrInvalidTiming = lease.ErrInvalidTiming
	// ErrEffectDuration: an effect's declared maximum duration is not
	// positive or longer than the gate could ever pass (also matches
	// ErrInvalid).
	ErrEffectDuration = lease.ErrEffectDuration
	// ErrLeaseRunway: the side-effect gate refused; the effect was not
	// started and the run stops (a *RunwayError).
	ErrLeaseRunway = lease.ErrLeaseRunway
	// ErrLeaseLost: the run's lease is gone or the worker stopped itself;
	// its context is cancelled (a *LostError).
	ErrLeaseLost = lease.ErrLeaseLost
	// ErrUncertain: an effect was started and never committed; reconcile it
	// and call RunHandle.ResolveEffect (an *UncertainEffectError).
	ErrUncertain = lease.ErrUncertain
	// ErrUnknownQueue: a queue outside Config.Queues, or a queue the store
	// does not know in a queue control call (PauseQueue, ResumeQueue);
	// also matches ErrInvalid; an *UnknownQueueError.
	ErrUnknownQueue = lease.ErrUnknownQueue
	// ErrOverloaded: a world's inbox is full; retry after the delay the
	// error carries (a *host.OverloadedError).
	ErrOverloaded = lease.ErrOverloaded
	// ErrKeyReused: a command's idempotency key was applied with another
	// payload; nothing was applied (a *host.KeyReusedError).
	ErrKeyReused = lease.ErrKeyReused
	// ErrUnavailable: the store or a host could not be reached, or a
	// write's outcome is unknown; retry with the same idempotency key.
	ErrUnavailable = lease.ErrUnavailable
	// ErrClosed: the client, worker or service was stopped; what it had not
	// written is failed back with this, never dropped.
	ErrClosed = lease.ErrClosed
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
