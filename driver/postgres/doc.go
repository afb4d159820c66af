// Package postgres is Leasehold's production driver: Postgres through
// pgx/v5, with the same tables, columns and meaning as the SQLite driver in
// Postgres types (timestamptz at microsecond precision, bytea for hashes and
// the byte-exact JSON payloads). It passes the shared conformance suite
// (driver/drivertest) case for case.
//
// # Pools
//
// Two pgxpool pools, sized by Config:
//
//   - critical (default 4 connections) carries every write whose params'
//     Class() is lease.SyncCritical: create, grant, renew, revoke, handoff,
//     the expiry sweep's revoke-and-grant, import, and every run write
//     (enqueue, claim, renew, complete, fail, block, unblock, cancel,
//     reclaim), every effect write (begin, commit, resolve) and RunTx.
//     Nothing else may take these connections, so a burst of appends or
//     reads cannot starve the writes that keep leases and fences moving;
//   - general (default 8) carries DurableBatched writes (journal appends
//     and run event batches, each batch sharing one commit) and every
//     read.
//
// Routing is by the params' durability class, a type, not by method name.
// Every session runs with synchronous_commit=on (a commit is acknowledged
// only once it is durable), a statement_timeout, an equal
// idle_in_transaction_session_timeout (a paused client cannot keep a world's
// head row locked) and, when Config.Schema is set, that search_path.
// Acquiring waits at most Config.AcquireTimeout, which must be shorter than
// the statement timeout so a starved write fails fast and is retried.
//
// # An append, one round trip
//
// JournalAppend is one call of the SQL function leasehold_journal_append
// (migration 0002) in autocommit: one round trip, one commit. Under the
// world's row lock it reads the store clock, applies the append rule of
// journal.CheckAppend, journals refusals as journal.PlanAppend does, and
// chains the hashes of journal.Canonical. package journal stays the
// definition: the conformance suite's property case requires every entry
// the function writes to hash exactly like the Go planner's, and every audit
// recomputes each hash in Go. A batch of one request is one statement
// that accepts it without the function — a conditional UPDATE of the head
// and the entry's INSERT, the expiry judged on a clock read once the
// head's row lock is held (journal_one.go) — and calls the function, in the
// same statement, for any other answer.
//
// # A lease change, two round trips
//
// Every lease change to an existing world — LeaseChange, the expiry
// sweep's included (world.SweepExpired) — goes through one helper (change.go), which
// takes a connection from the pool its class names and makes two round
// trips, each one pipelined pgx.Batch:
//
//  1. BEGIN; SELECT the head row FOR UPDATE; SELECT clock_timestamp();
//     and, for appends, SELECT the rejection markers of the locked epoch for
//     the batch's holders. Postgres runs them in order, so the store time
//     and the markers are read after the lock is granted, under it.
//  2. One statement whose data-modifying CTEs make the conditional UPDATE of
//     the head row, INSERT the entries (unnest of column arrays) and INSERT
//     the rejection markers, both INSERTs gated on the UPDATE having
//     matched; then COMMIT.
//
// Between the two, the pure planner of package journal decides, on the
// locked head and that store time, what to write, and seals the entries
// (hash chain included). If it refuses, or plans nothing (an append batch
// whose refusals are all journaled already), the transaction is rolled back
// instead of round trip 2. On a warm connection a lease change therefore
// costs two round trips (TestRoundTripsPerChange pins this, and one for an
// append); the first use of a statement on a
// connection adds one to prepare it. No Go lock is held across a round
// trip: the head row's lock is the only serialization, and it lives in the
// store.
//
// A caller's context that ends mid-statement closes its connection (pgx's
// default); the backend, queued for a head row lock, finds its client gone
// and rolls back. A cancel request is not used: it is asynchronous and can
// land on the next statement of a reused connection.
//
// An explicit BEGIN inside a pgx batch behaves as it reads: pgx sends the
// batch as one pipeline ending in one Sync, the BEGIN turns the pipeline's
// implicit transaction into an explicit one, and it stays open, holding the
// row lock, until round trip 2's COMMIT. Any error leaves the transaction
// open (aborted); the helper rolls it back before releasing the connection,
// and pgxpool discards a connection still in a transaction if even that
// fails.
//
// # Why the fence is in the WHERE
//
// The UPDATE's WHERE restates the plan's journal.Cond: position (a
// compare-and-swap on the whole head), epoch and holder (the fence), expiry
// against the store time the plan was made at, and the seen position. The
// planner has already checked the same facts on the locked head, so in a
// correct build the UPDATE always matches. It is there so that correctness
// does not rest on the Go rules alone: the store itself refuses a write
// under a stale fence, in the same statement that would make it. If the
// UPDATE matches no row, neither INSERT writes anything, the (empty)
// transaction commits, and the caller gets an error wrapping
// driver.ErrFenced. Two sweepers or two replicas racing on one world
// serialize on the row lock; the second re-plans on the head the first
// left, which is why the sweep is safe on every replica at once.
//
// A COMMIT whose answer is lost (the connection drops after sending it) has
// an unknown outcome, as with any database: the caller sees an error, and
// must read the journal (entries carry the command's idempotency key)
// rather than assume either way. Every earlier failure commits nothing.
//
// # Store clock
//
// Lease expiry is computed and compared on the store's clock_timestamp()
// (not now(), which is the transaction's start and would predate the lock
// wait). Tests inject a fake StoreClock instead, as River's
// coalesce(@now, now()) does. timestamptz keeps microseconds, the journal's
// resolution, so times round-trip exactly; they are read back in UTC.
//
// # Runs
//
// The runs table (migration 0003) carries the run scheduler of SPEC §3;
// package runs holds its states and rules. Every transition is one
// statement in autocommit, one round trip, one commit, and states its
// condition in its WHERE:
//
//   - RunClaim picks and claims in one UPDATE … FROM a CTE that selects
//     the available, due runs in claim order FOR UPDATE SKIP LOCKED:
//     concurrent claimers skip each other's picks, so no run is claimed
//     twice, and the new fence, greatest(fence, floor)+1, fences out
//     every earlier holder — also one a standby promoted after losing
//     writes never heard of (fencefloor.go).
//   - The runner's writes (renew, complete, fail, block) are UPDATE …
//     WHERE id AND fence AND state = 'running' (a renewal also AND owner
//     AND expires_at > now, so it never revives an expired lease). When
//     one matches no row it has written nothing, and a second round trip
//     reads the run so that driver.ClassifyRefusal can say why
//     (ErrFenced, ErrLeaseExpired or ErrNotFound).
//   - RunReclaim returns expired leases in one UPDATE whose CTE picks
//     them FOR UPDATE SKIP LOCKED: every replica may run it at once and
//     each run is reclaimed by one of them; a lease renewed after the
//     statement's snapshot is re-checked under the lock and left alone.
//   - RunEnqueue is one pipelined transaction: advisory locks on the
//     batch's unique keys in one global order (so batches taking the
//     same keys in different orders queue instead of deadlocking), one
//     INSERT … ON CONFLICT DO NOTHING per run with a key, one INSERT …
//     SELECT FROM unnest(…) WITH ORDINALITY per stretch of up to 1000
//     runs without one (in input order, so ids ascend in it), then one
//     lookup of the keys. The lookup is a statement of its own so that,
//     under READ COMMITTED, it sees a run whose transaction committed
//     while an insert waited for it. A batch of one such stretch and no
//     key is that one statement, its own transaction.
//
// The store time of each statement is one CTE,
// coalesce($1, clock_timestamp()), evaluated once, so every time a
// statement writes and compares is the same instant.
//
// # Effects and events
//
// Migration 0004 adds run_effects, the effect ledger keyed (run, key), and
// run_events, the per-run event log keyed (run, fence, seq). Every write
// to either checks the run in the same statement or transaction: a CTE
// selects the run row WHERE id AND fence AND state = 'running' FOR SHARE.
// The shared lock is held to commit, so the UPDATE of a reclaim, cancel or
// completion either commits before the write (which then matches nothing:
// under READ COMMITTED a row lock that waited re-checks the row's new
// version) or waits for it; no fence change commits in between. Shared
// locks never wait for one another.
//
//   - RunEffectBegin is one statement (effects.go): the fence check, the
//     existing effect, and INSERT … ON CONFLICT DO NOTHING of the intent
//     when there is none, answering started, committed or uncertain. An
//     existing intent is never modified. A begin that lost the insert race
//     to a concurrent one (ON CONFLICT waited for it; the statement's
//     snapshot predates it) runs again and finds it.
//   - RunEffectCommit and RunEffectResolve are one conditional UPDATE
//     (resolve-not-done: DELETE) each (effects_settle.go). When one
//     matches nothing, a second round trip reads the run and the effect to
//     say why: ErrNotFound (no run, or for resolve no effect),
//     *driver.RunFencedError (the run is not held), ErrFenced (commit of
//     an intent this fence did not begin) or ErrConflict (already
//     committed; a retried commit whose answer was lost sees this, and
//     RunEffectBegin then reports the stored result).
//   - RunTx (runtx.go) is a READ COMMITTED transaction on a critical
//     connection: BEGIN; the begin statement inserting the effect already
//     committed (the fence check's FOR SHARE is then held while fn runs);
//     fn(pgx.Tx); COMMIT. Inserting the effect before fn makes a second
//     transaction of the key wait for the first and report Done instead of
//     running fn again. Three round trips besides fn's.
//   - RunEventAppend (events.go) is one INSERT … SELECT FROM unnest of the
//     batch's column arrays, joined to the batch's runs locked FOR SHARE
//     in id order: one round trip, one commit, one store time per batch.
//     It is a plain INSERT, without ON CONFLICT's speculative insertion
//     (a quarter of the throughput); a stored or repeated key makes it fail
//     whole, and the batch goes again with ON CONFLICT DO NOTHING. When
//     fewer rows went in than the batch holds, one more query finds the
//     batch's keys that are not stored: those events were fenced.
//
// TestRoundTripsPerEffectOp pins these counts.
//
// # Migrations
//
// Embedded (migrations/*.sql) and applied by Migrate in one transaction
// under a transaction-scoped advisory lock keyed by the schema, so
// concurrent migrators serialize and the second finds nothing to do. A
// schema newer than the binary is refused with driver.ErrSchemaTooNew.
//
// The driver holds SQL and error mapping only: Open returns Driver
// (driver.go), the unexported store behind driver.Validating, which checks
// and normalizes every call's input before it reaches the SQL here.
//
// Files: driver.go (the validated Driver), postgres.go (config, pools,
// settings, clock), migrate.go (the dialect of driver.RunMigrations),
// change.go (the one change path), world.go, journal.go, sweep.go (the
// scan of expired leases),
// errors.go; runs.go (columns, scan, RunGet, the one run-write path),
// runs_enqueue.go, runs_enqueue_tx.go (in the caller's pgx.Tx, and BeginTx),
// runs_claim.go (claim and reclaim), runs_write.go (the
// fenced and operator writes); effects.go (effect rows, begin, list),
// effects_settle.go (commit, resolve), runtx.go, events.go.
package postgres
