package lease

import "errors"

// Sentinel errors shared by every layer (lease core, journal, drivers, the
// public API). Callers match them with errors.Is; the richer typed errors
// (journal.RefusedError, journal.InputError, …) unwrap to one of these.
var (
	// ErrNotFound: the world (or run) named does not exist in the store.
	ErrNotFound = errors.New("leasehold: not found")

	// ErrConflict: the resource already exists (creating a world twice,
	// importing into a world that already has entries).
	ErrConflict = errors.New("leasehold: conflict")

	// ErrInvalid: the input was refused before anything was written
	// (oversized payload, unknown kind, malformed JSON, negative position…).
	ErrInvalid = errors.New("leasehold: invalid input")

	// ErrFenced: the write carried an epoch (fence) that is not the current
	// one — older (a zombie), newer (from the future) or ended by a revoke.
	// Nothing was changed.
	ErrFenced = errors.New("leasehold: fenced: epoch is not current")

	// ErrNotHolder: the epoch is current but the writer is not its holder.
	ErrNotHolder = errors.New("leasehold: not the lease holder")

	// ErrLeaseExpired: the holder's lease has expired on the store's clock;
	// it must not write until it is granted a new epoch.
	ErrLeaseExpired = errors.New("leasehold: lease expired on the store clock")

	// ErrSeenBehind: the holder has not yet replayed the journal through the
	// entry that granted its epoch (seen_position below the grant), so its
	// view of the world may be stale and it may not append.
	ErrSeenBehind = errors.New("leasehold: seen_position is below the grant of this epoch")

	// ErrLeaseHeld: a grant was asked for while the lease is still held;
	// revoke it first (or let the expiry sweep do so).
	ErrLeaseHeld = errors.New("leasehold: lease is held")

	// ErrSchemaTooNew: the database schema was migrated by a newer binary;
	// this binary refuses to run against it rather than guess.
	ErrSchemaTooNew = errors.New("leasehold: database schema is newer than this binary")

	// ErrNotMigrated: the store's schema is missing or behind this binary
	// and migrations were skipped (Config.SkipMigrate, the CLI's read-only
	// commands). Refused at open, so no call fails later on a missing
	// table.
	ErrNotMigrated = errors.New("leasehold: store not migrated: run `leasehold migrate`")

	// ErrCorrupt: stored or imported journal data fails verification (hash
	// chain, encoding, a torn line, a write under a non-current epoch).
	ErrCorrupt = errors.New("leasehold: journal verification failed")

	// ErrLeaseRunway: the side-effect gate refused — the holder cannot be
	// sure its lease outlives the effect (durably confirmed runway, or the
	// time left before it must stop itself, is shorter than the effect's
	// declared maximum plus the margin) and one synchronous flush did not
	// help. The holder stops; the effect was not started.
	ErrLeaseRunway = errors.New("leasehold: not enough durable lease runway")

	// ErrLeaseLost: the holder's lease is gone — a renewal flush did not
	// return its row (fenced out, expired, finished), or the holder stopped
	// itself after its durable lag reached D_stop. Its context is cancelled.
	ErrLeaseLost = errors.New("leasehold: lease lost")

	// ErrClosed: the component was stopped (Client.Close, Worker.Stop)
	// before it could take or finish the call. A write failed with it was
	// never acknowledged; for an event, the run's Step reports it.
	ErrClosed = errors.New("leasehold: closed")
	// ErrUncertain: an effect was started (its intent recorded) but never
	// committed — by an earlier holder, or by this one before a failure —
	// so it may or may not have happened. It is never re-run silently: the
	// handler reconciles and resolves it.
	ErrUncertain = errors.New("leasehold: effect outcome is uncertain")

	// ErrUnknownQueue: a queue neither the configuration (Config.Queues)
	// nor the store's queue registry knows. A *driver.QueueUnknownError or
	// the root's *UnknownQueueError carries it; both match ErrInvalid too.
	ErrUnknownQueue = errors.New("leasehold: unknown queue")

	// ErrOverloaded: a world's inbox is full; nothing was queued. Retry
	// after the delay the error carries (a *host.OverloadedError).
	ErrOverloaded = errors.New("leasehold: overloaded: retry later")
	// ErrKeyReused: a command's idempotency key was already applied with a
	// different payload; nothing was applied (a *host.KeyReusedError).
	ErrKeyReused = errors.New("leasehold: idempotency key reused with a different payload")
	// ErrUnavailable: the store could not be reached, or a write's outcome
	// is unknown; retry with the same idempotency key, which applies it at
	// most once.
	ErrUnavailable = errors.New("leasehold: unavailable: outcome unknown, retry with the same key")
	// ErrBadSignature: an append to a world whose holder signs (its grant
	// carries the node's registered key) came unsigned, or with a
	// signature that does not verify against that key.
	ErrBadSignature = errors.New("leasehold: signature does not verify against the holder's registered key")
)
