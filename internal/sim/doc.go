// Package sim is the deterministic simulator of SPEC §5: it runs the
// shipped worker, completer, event committer, keeper, reclaimer, expiry
// sweep and world holder against the real SQLite store of record under a
// seeded schedule of faults, and checks the safety invariants against a
// witness outside the ledger.
//
// What is shipped code, run unchanged:
//
//   - Each worker process is a scheduler.Worker (new for each generation,
//     under a new owner id), with its keeper.Keeper (renew, drain, gate,
//     self-stop, modes), its completer (completions group-committed
//     through RunCompleteMany, a refused row alone) and a
//     scheduler.EventCommitter, all on internal/batcher and
//     internal/startstop. Handlers go through the shipped scheduler.Run:
//     Effect (check, gate, intent, gate, fn, commit), ResolveEffect, Emit
//     and Step, and the worker's own finish (fenced complete or fail with
//     the reason rule and the backoff).
//   - The reclaimer is scheduler.Reclaimer and the expiry sweep
//     world.Sweeper, both every P on the store clock.
//   - Each process holds one world, under the name node-<id> kept across
//     restarts (the ABA case), through a world.Holder: the adoption rules,
//     the synchronous renewal before the first append, the runway, the
//     fenced append and the handoff.
//   - On one seed in four (Knobs.Host, host_mode.go) the processes run the
//     shipped world host instead of the bare holder: each generation is a
//     host.Host (host.New) with programs.Bank, its world loop, turns,
//     mirror, keeper (WorldRenewMany), node-key signing and effect ledger,
//     on this generation's runtime, over hostStore (host_store.go: every
//     call through the network, with the same store-side records as
//     worldStore). The host's effect calls go to a payout witness outside
//     the ledger (payoutEffector, host_oracle.go) that refuses lower fence
//     tokens and implements host.Reconciler from what it recorded.
//   - The store is the real SQLite driver (the run, effect, event and
//     journal SQL with its fencing WHERE clauses), on a per-seed file,
//     whose clock is the simulator's.
//
// They run on the simulator's runtime (runtime.go, an internal/rt.Runtime):
// every goroutine they start is a cooperative thread, every wait parks the
// thread on the event loop (loop.go) until an event, a context's end or a
// virtual instant resumes it, and every timeout is virtual. Exactly one
// thread runs at a time and events are ordered by virtual time and then by
// a sequence number, so a seed replays exactly.
//
// What the simulator still owns, and why:
//
//   - The handler (proc.go, handle) and the world holder's program
//     (world.go, worldLoop): which effects and events a run makes, when a
//     holder reads, renews, appends or hands off. That is the user's code
//     and a host's policy, and here it must be the seed's.
//   - In host mode, the host's clients and operator (host_mode.go):
//     submitters that send bank commands under unique keys and retry a
//     retryable answer with the same key — at the node a NotHolderError
//     names, as host.Router does, through hostRPC (a call to another
//     process's host over the network, run on a thread of that
//     generation) — from an outbox that outlives the generation; now and
//     then an acknowledged command sent again; and handoffs as
//     Router.Handoff makes them (the receiver Prepares, the sender hands
//     off, the receiver Acquires). host.Router itself is not run: it waits
//     on the real runtime.
//   - The network (net.go, run_store.go, world_store.go): per-call latency
//     each way, store errors, lost requests and replies (the caller times
//     out without knowing the outcome), partitions, and a late reclaimer's
//     lag. These are the faults under test. The stores it hands the
//     shipped code carry each call through it and record, at the store
//     side, what only the store can see at that instant.
//   - The faults' schedule: crashes (a generation ends at once; its
//     threads unwind and in-flight requests may still land), restarts,
//     pauses (SIGSTOP-like, half of them aimed at the instant a lease has
//     expired but is not yet reclaimed; in host mode also one in five
//     payouts, aimed past the world lease's expiry: the mid-turn expiry),
//     clock offsets, drift and steps.
//   - The oracle, the witness and the porcupine histories (oracle.go,
//     history.go, history_world.go), which must sit outside the code they
//     judge. The run model is runs.Transition, the state machine itself.
//
// The invariants (SPEC §5) are checked as the simulation runs and at its
// end (oracle.go); run state transitions as the store applied them are also
// checked for linearizability with porcupine against the sequential
// fenced-run model (history.go), and the journal's against the append
// rule (history_world.go). In host mode the oracle also checks that every
// acknowledged command key is in the journal exactly once, as a host.turn
// entry at the acknowledged position (InvCommands); that the bank folded
// from the journal never goes negative and equals the deposits minus the
// payouts of its turns (InvLedger); that the witness accepts each payout at
// most once, and exactly once for a turn that records it made
// (InvPayoutOnce); and that a payout is invoked only while its invoker
// holds the lease under the call's epoch on the store clock
// (InvEffectLive). The planted bugs host-skips-replay and
// mirror-forgets-keys (internal/bugs) show these bite.
//
// The hosts snapshot the world every few positions (host/snapshot.go), so
// restarts, spills and rebuilds restore a snapshot and replay the tail:
// every snapshot a mirror finds must verify (InvSnapshot), and a wrong
// restored state would break the checks above. In half the host seeds
// (Knobs.Band) the hosts' hot-world band moves the world instead of the
// operator's random handoffs (host_band.go): every handoff must follow
// its holder's host.band entry under the same epoch, naming the same
// receiver, with a reason and a load on the right side of the thresholds
// (InvBand; planted bug band-skips-note). That no position has two
// writers through those handoffs is InvJournal's and the world model's.
package sim
