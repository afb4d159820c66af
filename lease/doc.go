// Package lease is the pure core of leasehold's leases: the durability
// classes every write declares, the timing parameters and the rules that
// keep them safe, saturating duration arithmetic, and the holder's runway.
//
// Nothing here performs I/O or reads a clock. Callers pass the times in —
// from an injected clock.Clock in production, from logical time in the
// simulator — so the same decisions run in both, and every rule is a plain
// function that a table test can pin down.
//
// # The timing rules, and why
//
// A holder keeps its lease alive write-behind: every T_renew it advances the
// expiry it wants in memory, and every T_drain a drain writes it to the
// store. It measures its runway on its own monotonic clock from the send of
// the last write that set the expiry, less a safety margin S for the store
// clock running ahead, and it stops itself once its durable lag reaches
// D_stop. Two inequalities make that safe, and [Timing.Validate] enforces
// both at start-up:
//
//   - D_stop + S < T_lease: a lagging holder stops itself before anyone may
//     reclaim its lease, even with the store clock S ahead;
//   - T_renew + T_drain < D_stop: the lag of a healthy holder, which is at
//     most one renewal period plus one drain period, never looks like the
//     lag that triggers a self-stop.
//
// An effect must finish inside the runway left in the worst healthy case,
// T_lease - S - T_renew - T_drain ([Timing.MaxEffect]); a longer declared
// duration is refused when it is declared ([Timing.CheckEffect]) rather than
// failing the gate at run time.
//
// All arithmetic on durations and times saturates ([AddSat], [SubSat],
// [MulSat], [Until], [AddTime]): an absurd configuration or a deadline long
// past gives a clamped answer, never a wrap-around or a panic.
package lease
