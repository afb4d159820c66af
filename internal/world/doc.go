// Package world holds the I/O side of worlds around the pure journal core:
//
//   - Holder (holder.go): one process generation's hold on a world's write
//     lease — the holder protocol of SPEC §4: adopt an epoch delivered to
//     this holder, renew synchronously before the first append (the runway
//     starts from that send), append under the epoch with a seen position,
//     renew, hand off, and drop the epoch when the store says it is gone.
//     Its decisions are pure functions of its state and the clock's reading
//     (holder_rules.go); the Holder carries them out over a narrow Store
//     and starts no goroutine, so the simulator drives the same code.
//   - Appender: the group committer that shares one store transaction (one
//     fsync) among concurrent appends to a world.
//   - Sweeper: the expiry sweep service.
//
// The world host (mirror, turns, the hot band) builds on the Holder in a
// later release.
package world
