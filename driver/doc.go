// Package driver defines the store-of-record interface that Leasehold's
// drivers implement (driver/sqlite, driver/postgres) and that the shared
// conformance suite (driver/drivertest) exercises case for case.
//
// This is an internal seam, NOT A STABLE API: it changes whenever the
// protocol needs it to. Applications use the root package leasehold.
//
// Every write method takes a *Params struct that implements lease.Classed,
// so the durability class of each write path is a type the driver routes on
// (the Postgres driver sends SyncCritical writes through its reserved pool)
// and records, not a comment.
//
// How a driver commits a world change (the same shape in every driver):
//
//  1. lock the world's head row (Postgres SELECT … FOR UPDATE; SQLite the
//     single writer under BEGIN IMMEDIATE) and read the store's clock;
//  2. hand the head and that time to the pure planner of package journal,
//     which decides and seals the entries (hash chain included);
//  3. write the plan with ONE conditional UPDATE of the head row whose
//     WHERE re-asserts the plan's journal.Cond (position, epoch, holder,
//     expiry on the store clock, seen position); if it matches no row
//     nothing is written; then insert the entries; commit.
//
// So the fence is enforced by the store inside the transaction, not only by
// the Go planner.
//
// # Input is validated here, once, above the drivers
//
// Every *Params type has a Validate method (validate*.go) holding its input
// rules (SPEC §5 "Bad input"); Validating(d) applies them, and normalizes
// JSON to compact form on a copy, before d sees a call. A driver
// implementation therefore holds SQL and error mapping only, and both
// stores refuse one input with one *journal.InputError (ErrInvalid).
//
// sqlite.Open and postgres.Open return their driver already wrapped (their
// exported Driver type embeds Validating of the unexported store). That is
// the choice that keeps every existing caller validated without touching
// it: the root Client, the scheduler, the world appender and sweeper, the
// simulator, the CLI and the tests all obtain a driver from Open, so none
// can reach a store's SQL unchecked, and none has to remember to wrap. A
// new driver does the same in its constructor. The pure planners of package
// journal (PlanCreate, PlanAppend, …) still check what they decide on: that
// is the journal's own rule, not a second validation of the driver's input.
package driver
