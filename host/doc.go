// Package host runs worlds: a Host holds the write leases of some worlds
// and runs their turns wherever the lease is — on a world's home or on a
// spill node — while the journal of record and the world's identity stay
// in the store (SPEC §4).
//
// A world runs a Program: a command is decided against the state folded
// from the journal into events and a reply; the events and the reply are
// journaled as one entry carrying the command's idempotency key, in a
// group commit with the other commands of the batch, and the submitter is
// answered only once that entry is durable under the world's current
// epoch. The store applies a key once per world, forever and in any
// epoch, so a command retried after a timeout, a handoff or a crash is
// applied once and answered with the first reply.
//
// The holder protocol (adopt an epoch delivered to this node, replay
// through its grant, renew synchronously before the first append, append
// under the epoch, hand off) is internal/world's Holder; the host drives
// it from one loop per world. Handoff hands a world to another node as
// this holder's last act; the node named acquires it on its next
// submission (or Acquire) and replays only what it has not folded. The
// design, and why commands go straight to the holder rather than through a
// store inbox, is in docs/design/worlds.md.
//
// Package host/programs holds two example programs, a bank ledger and a
// key-value store, used by the tests, the demo and the benchmarks.
package host
