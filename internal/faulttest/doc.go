// Package faulttest holds the real-fault scenario tests of SPEC §5: runs
// worked by real worker processes against real PostgreSQL while the
// network, the server or the processes themselves fail. The package has no
// code of its own; everything is in its tests.
//
// # Shape of a scenario
//
// The test process (the parent) owns everything that must outlive a
// failure:
//
//   - the store of record: a fresh schema on the shared test server
//     (internal/testdb), or a throwaway cluster (internal/pgcluster) when
//     the scenario stops the server itself;
//   - one TCP fault proxy (internal/faultproxy) per worker process, so a
//     fault hits one worker's connections and no other's;
//   - a scheduler.Reclaimer on its own direct connection, as on any
//     replica, whose every reclaim is recorded with the reason and times
//     the store wrote;
//   - the witness (internal/witness), served over HTTP: the downstream
//     system, outside the ledger, which records every effect invocation
//     with its fence token and refuses a token lower than one it accepted.
//     Beside it the same server takes the workers' reports: an effect found
//     uncertain (before it is reconciled), an event acknowledged by Step,
//     a worker's keeper figures, and the signals a scenario waits on.
//
// The workers are this test binary re-executed with workerEnv set
// (TestMain dispatches): each opens the Postgres driver through its proxy
// and runs a scheduler.Worker in write-behind mode whose handler does, per
// run, a few run.Effect calls that invoke the witness with the token's
// idempotency key and fence, each followed by run.Emit and run.Step. An
// uncertain effect is reported to the parent first, then reconciled by
// asking the witness whether the key was accepted, then settled with
// ResolveEffect. A worker exits when its stdin closes (gracefully) or when
// the parent kills it; it never outlives the parent.
//
// Every timing is the run default divided by 30 (T_lease 3s, T_renew
// 500ms, T_drain ≈167ms, D_stop 1.5s, S 500ms, P ≈33ms), and so are the
// faults; the pool's acquire and statement timeouts are the defaults
// divided by 10 (200ms, 1s), since a thirtieth of them is shorter than the
// delays of a machine running the whole suite (harness_test.go).
//
// # What every scenario checks
//
// Once the fault is lifted and every run is final, the workers stop and
// the parent checks, from the witness and the store alone:
//
//   - no effect key was invoked a second time without an uncertain report
//     for it first (the n-th invocation of a key follows at least n-1
//     reports), and each completed run's effects are committed in the
//     ledger and were accepted downstream;
//   - no effect reached the witness after the lease it was made under had
//     expired on the store clock — except, in the paused-process scenario,
//     the late call the test provokes, which the witness must refuse;
//   - every event a worker saw acknowledged by Step is in the store once,
//     in (fence, seq) order, with the payload emitted, and each fence's
//     events are gapless;
//   - every run is accounted for: completed, or failed with a reason;
//   - no run was reclaimed before its expiry, and each came back within
//     T_lease + P + S of its holder's last renewal, measured from the
//     store's own timestamps (the expiry in the reclaim reason less
//     T_lease, to the scheduled_at the reclaim wrote) — net of the delays
//     the environment is measured to have added: the store down, the store
//     slow to start the reclaim statement, the test process not scheduled
//     (strand_test.go says why a thirtieth of the timing needs this on a
//     loaded machine; on a healthy one they measure milliseconds);
//
// and logs the figures: runs, effects, events, uncertain reports, reclaims
// and strand times (gross and net), and each worker's keeper counters.
//
// The scenarios run in parallel (each has its own schema or cluster, its
// own proxies and its own witness) and bound every wait generously, so a
// loaded machine slows them down without failing them.
package faulttest
