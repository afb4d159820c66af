// Package sim is the deterministic simulator of SPEC §5: it drives the real
// lease core, keeper (renew, drain, gate, self-stop), run rules and store
// of record under a seeded schedule of faults, and checks the safety
// invariants against a witness outside the ledger.
//
// What is real and what is simulated:
//
//   - The store of record is the real SQLite driver (driver/sqlite: the
//     run, effect and event SQL with its fencing WHERE clauses), on a
//     per-seed file, whose store clock is the simulator's.
//   - Each worker process has a real keeper.Keeper (renew, DrainOnce,
//     Entry.Gate, WatchOnce, modes) on its own virtual clock with an offset
//     and a drift. The worker's loop — claim, heartbeat, effect, emit,
//     complete — mirrors scheduler.Worker and scheduler.Run step for step,
//     calling the same driver methods and keeper entry points; the
//     goroutines and timers of the scheduler are replaced by the
//     simulator's threads so that the schedule is the seed's alone.
//   - The network between each worker and the store is simulated: per call
//     latency each way, store errors, lost requests and lost replies (the
//     caller times out without knowing the outcome), partitions per
//     process. Processes crash (losing all in-memory state; in-flight
//     requests may still land) and restart under a new owner id.
//
// Concurrency is cooperative and deterministic: every thread (a handler, a
// heartbeat, the drain, the self-stop timer, the reclaimer) is a goroutine,
// but exactly one runs at a time, handing control back to the event loop
// whenever it waits (a store call, a sleep). Events are ordered by virtual
// time and then by a sequence number, so a seed replays exactly.
//
// The invariants (SPEC §5) are checked as the simulation runs and at its
// end (oracle.go); run state transitions as the workers observed them are
// also checked for linearizability with porcupine against a sequential
// model of a fenced run (history.go).
package sim
