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
//   - Each process also holds one world, under the name node-<id> kept
//     across restarts (the ABA case), through a real world.Holder, new for
//     each generation, on the process's clock: the adoption rules, the
//     synchronous renewal before the first append, the runway, the fenced
//     append and the handoff are the shipped code. internal/sim/world.go keeps only
//     the holder's program — the seeded choice of what to do next (read,
//     renew, append n entries, hand off to whom) and the sleeps — and
//     internal/sim/world_store.go gives the Holder its store: each call goes through
//     the simulated network on the calling thread, and is recorded at the
//     store side for the porcupine world history and the oracle.
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
// What the simulator still owns in the world half, and why: the program
// (when to read, renew, append or hand off is a host's policy, and here it
// must be the seed's); the network (latency, loss, unknown outcomes and
// partitions are the faults under test); the expiry sweep's schedule
// (sweepLoop calls the driver's sweep every P on the store's thread:
// world.Sweeper's loop runs on timers and goroutines, which the loop
// replaces); and the oracle and the world history, which must sit outside
// the code they judge.
//
// The invariants (SPEC §5) are checked as the simulation runs and at its
// end (oracle.go); run state transitions as the workers observed them are
// also checked for linearizability with porcupine against a sequential
// model of a fenced run (history.go).
package sim
