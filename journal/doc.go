// Package journal is the pure core of a world's journal of record: entries
// and their canonical encoding, the hash chain, the lease fold, the append
// rule and the planning of every lease change. It does no I/O and never reads
// a clock: every function takes the store's time as an argument.
//
// Drivers (package driver/…) carry a Plan out inside one store transaction
// and re-assert the plan's Cond in the SQL WHERE of a conditional write, so
// the fence is enforced by the store and not only here.
//
// Lease state machine, derived by Fold (one epoch per box; the arrows are the
// only entries that change the lease):
//
//	         lease.granted{e+1}                lease.handed_off{e+1}
//	┌──────┐ ───────────────▶ ┌───────────────┐ ─────────────┐
//	│ none │                  │ held(h, e, x) │ ◀────────────┘ (to ≠ from)
//	└──────┘ ◀─────────────── └───────────────┘ ◀─┐
//	         lease.revoked{e}        │ lease.renewed{e}: x = t + term
//	         (operator, or expiry    └──────────────┘
//	          sweep once t ≥ x)
//
// h is the holder, e the epoch, x the expiry on the store clock, t the
// entry's store time. Data entries and append.rejected change nothing but
// the position and the hash chain.
//
// Files: entry.go (entries, kinds), encoding.go (canonical bytes and hash),
// payloads.go (lease entry payloads), fold.go (the lease fold),
// append.go (the append rule), plan.go (lease changes as plans), epoch.go
// (the next epoch, and a store's failover floor),
// validate.go (input limits), audit.go (verification), jsonl.go (export and
// import format).
package journal
