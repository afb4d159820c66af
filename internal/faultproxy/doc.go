// Package faultproxy is a small, real TCP proxy that tests put between a
// client (a worker process, a goroutine, a pgx pool) and a server (usually
// PostgreSQL) to inject network faults at runtime: latency with jitter,
// stalls, bandwidth limits, a blackhole that silently drops traffic, and
// abrupt resets.
//
// We wrote our own rather than use Shopify/toxiproxy: toxiproxy is a server
// with an HTTP API, a client library and a large dependency tree, while our
// tests need five faults on loopback from inside the test process. This
// package uses only the standard library.
//
// # Model
//
// New listens on 127.0.0.1:0; every accepted connection is paired with a
// fresh connection to the target (a "link"). Each direction of a link is a
// pipe of two goroutines:
//
//	src ──read──▶ reader ──chunk{data, release}──▶ queue ──▶ writer ──write──▶ dst
//
// The reader reads up to 32 KiB at a time and stamps the chunk with a release
// time: arrival + latency + jitter, never earlier than the previous chunk's
// release, so jitter delays but never reorders. The writer takes chunks in
// order and holds each until its release time, the end of any stall and,
// with a bandwidth limit, the pacing deadline have all passed. Faults live
// under one mutex and are read per chunk, so every setter takes effect on
// running connections; a setter also wakes held writers so they recompute
// (Stall(0) releases held data at once).
//
// The queue holds at most 256 chunks (8 MiB) per direction. When it is full
// the reader stops reading, so the sender feels TCP backpressure instead of
// the proxy growing without bound.
//
// # Faults
//
//   - SetLatency(d, jitter): each chunk is delayed d plus a uniform [0, jitter)
//     in its direction; a round trip costs at least 2d. Connection setup is
//     not delayed.
//   - Stall(d): all traffic on all links is held until d from now, then
//     delivered in order. A later Stall replaces the end time; Stall(0) ends
//     a stall at once.
//   - SetBandwidth(n): each direction of each link is paced to n bytes/s,
//     written in slices of about 50 ms worth. 0 means unlimited.
//   - SetBlackhole(true): bytes (and FINs) read in either direction are
//     dropped, and chunks already queued are dropped when released; new
//     connections are still accepted and dialed, but nothing is forwarded.
//     A link that dropped anything is "lost": a TCP stream with a hole in it
//     cannot go on, so it forwards nothing more, and SetBlackhole(false)
//     resets it (RST to both peers). Links that dropped nothing carry on.
//     A slice already being written when the blackhole starts still arrives.
//   - ResetAll: every current link is closed with SO_LINGER 0, so both peers
//     see a reset (ECONNRESET), not a clean EOF.
//
// A half-close (FIN) is forwarded in order after the data before it, and a
// read error other than EOF on one side resets both sides.
//
// # Shutdown
//
// Close stops the listener, cancels dials in progress, closes every link and
// waits for every goroutine the proxy started. All waits (release times,
// stalls, pacing, a full queue) also watch the link's done channel, so Close
// never waits on a fault. Close is idempotent.
//
// With pgx: a query that times out under a blackhole makes pgx close that
// connection asynchronously (cancel request, Terminate, drain), which would
// wait up to 15 s on a silent peer. Lifting the blackhole resets the broken
// links and lets that cleanup finish; wait on PgConn().CleanupDone() before
// checking for leaked goroutines.
//
// This is a test tool: it trusts its caller, keeps no per-link fault
// settings and makes no attempt at production-grade throughput.
package faultproxy
