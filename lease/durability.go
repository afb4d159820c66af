package lease

import "strconv"

// Durability is the class a write declares: how durable it must be before
// its caller is answered, and how it may share that cost with other writes.
// Metrics and logs carry it by its String form.
type Durability uint8

// The durability classes. They start at 1 so that a params struct whose
// class was never set is invalid rather than silently the strictest or the
// loosest class.
const (
	// SyncCritical writes — claim, complete, fail, block, cancel, grant,
	// revoke, handoff, effect intent and commit, idempotency keys — are
	// durable before the caller is answered, are fenced, and go through the
	// reserved critical connection pool so batch traffic cannot starve them.
	SyncCritical Durability = iota + 1

	// DurableBatched writes — event log appends, journal data entries under
	// group commit — are durable before the step or append is acknowledged,
	// but many callers share one transaction (a multi-row INSERT, a COPY or
	// one fsync) to amortise its cost.
	DurableBatched

	// LossTolerantCoalesced writes — heartbeats and lease renewals — are
	// write-behind: kept in memory first and flushed by a coalescing drain.
	// Losing one only makes recovery more eager, which is the safe
	// direction, because the holder's runway is measured from the last write
	// that was confirmed.
	LossTolerantCoalesced
)

// String returns the class's name as used in metrics and logs, or
// "Durability(n)" for an invalid value.
func (d Durability) String() string {
	switch d {
	case SyncCritical:
		return "sync_critical"
	case DurableBatched:
		return "durable_batched"
	case LossTolerantCoalesced:
		return "loss_tolerant_coalesced"
	default:
		return "Durability(" + strconv.Itoa(int(d)) + ")"
	}
}

// Valid reports whether d is one of the declared classes.
func (d Durability) Valid() bool {
	return d >= SyncCritical && d <= LossTolerantCoalesced
}

// Classed is implemented by every store write path's params, so the class
// is a type, not a comment: a driver method can read the class it must
// honour, and a write without one does not compile.
type Classed interface {
	// Class returns the durability class the write must be given.
	Class() Durability
}
