// Package clock is the one source of time for leasehold's loops and decisions.
//
// Everything that waits or measures — the keeper's drain ticker, the
// self-stop timer, the reclaimer's poll, runway arithmetic — takes a [Clock]
// instead of calling package time directly. Production code passes [Real];
// tests and the deterministic simulator pass a [Fake] and move time with
// [Fake.Advance], so heartbeat, drain and expiry behaviour is tested without
// sleeping and replays identically from a seed.
//
// The design follows tailscale's tstime.Clock: timers and tickers are
// returned as small interfaces together with their channel, so the real
// implementation is just *time.Timer and *time.Ticker, and the fake can fire
// them from Advance.
//
// # Timer semantics
//
// Both implementations follow package time as of Go 1.23: after Stop or
// Reset returns, no stale value is received from a timer's or ticker's
// channel, and Stop/Reset on a timer report true if the timer had fired but
// its value had not yet been received. A ticker's channel holds at most one
// tick; ticks that come due while it is full are dropped.
package clock
