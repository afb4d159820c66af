// Package worldfault holds the world host's failure walkthroughs of SPEC
// §4 as real-fault tests: world hosts are real processes (this test binary
// re-executed, each running a host.Host behind its HTTP API), each reaching
// Postgres through a TCP fault proxy of its own; the parent runs the
// expiry sweep, as the store side, and submitters that route commands to
// whichever host the store's head names (host.Router over host.Remote
// peers). Every scenario ends by checking the journal against every
// acknowledgement — each acknowledged key journaled exactly once — and by
// auditing it: one holder per position.
//
// Timings are the world defaults divided by 10 (T_lease 3s, T_renew 500ms,
// T_drain 100ms, D_stop 1.5s, S 500ms, P 100ms). The package has no code
// of its own; everything is in its tests.
package worldfault
