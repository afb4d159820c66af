// Package sqlite is Leasehold's embedded driver: modernc.org/sqlite (pure
// Go, no cgo), WAL with synchronous=FULL so a commit is durable (fsynced)
// before it is acknowledged. It is the default store when no database URL is
// given.
//
// There is exactly one writer connection. Every write transaction is BEGIN
// IMMEDIATE on it, so writes are serialized by SQLite's own lock (also
// against other processes opening the same file) — the "single SQLite
// writer" the protocol's fence checks run under. Reads use a separate pool
// and see committed data through WAL snapshots.
//
// The store clock of a SQLite store is the process clock of its owner: the
// Clock in Config (the real clock unless a test injects a fake).
//
// The driver holds SQL and error mapping only: Open returns Driver
// (driver.go), the unexported store behind driver.Validating, which checks
// and normalizes every call's input before it reaches the SQL here.
//
// Files: driver.go (the validated Driver), sqlite.go (open, settings,
// clock), migrate.go (the dialect of driver.RunMigrations), change.go (the
// conditional head write every change goes through), world.go, journal.go,
// sweep.go (the scan of expired leases), errors.go. Runs: runs_row.go
// (columns, scan, RunGet), runs_stmts.go (their prepared statements),
// runs_enqueue.go, runs_enqueue_tx.go (in the caller's transaction, and
// BeginTx), runs_claim.go, runs_update.go (the shape of every
// single-run write and its refusal), runs_fenced.go (the runner's fenced
// writes), runs_operator.go (unblock, cancel), runs_reclaim.go. Effects
// and events: effects_stmts.go (their prepared statements, each write
// fenced in its own WHERE), effects.go (the effect ledger: begin, commit,
// resolve, list), runtx.go (the transactional effect), events.go (the
// group-committed per-run event log).
package sqlite
