// Package doctor measures the store's clock against the application's
// monotonic clock and decides whether write-behind lease upkeep is safe to
// start (SPEC §1, "Clocks and runway").
//
// # What matters and what does not
//
// Lease expiry is written and compared on the store's clock, and a holder
// measures its runway on its own monotonic clock from the send of the write
// that set the expiry. Both ends of every comparison use one clock, so the
// app↔store clock offset does not matter: the doctor reports it, and nothing
// uses it. What does matter is the store clock moving faster than real time
// within one lease term — running fast (rate error) or jumping (a step: an
// NTP step, a failover to another host). The safety margin S bounds that
// error; [Report.CheckWriteBehind] refuses when the sample shows more.
//
// # How a probe measures
//
// A probe is NTP's trick with one server: read the app clock (t0), ask the
// store for its time (st), read the app clock again (t1).
//
//	app   t0 ──────────── mid ──────────── t1      RTT = t1 - t0
//	                 ╲           ╱
//	store             st (somewhere in between)
//
// The store read its clock at some instant between t0 and t1, so taking the
// midpoint as that instant is wrong by at most RTT/2 either way: offset =
// st - mid, ± RTT/2. Every figure the doctor derives carries such a bound,
// and a figure is only trusted as far as its bound allows.
//
// The app side of every probe is placed on one timeline: a wall-clock anchor
// read once when sampling starts, plus monotonic time elapsed since. A step
// of the app host's own wall clock during the sample therefore cannot pose as
// a step of the store's. (For SQLite the store clock is the wall clock of
// the process that owns the file, so there the doctor measures that wall
// clock against the monotonic one — which is exactly the hazard.)
//
// # From probes to a verdict
//
// [Analyze] fits the offset against app time as a straight line whose slope
// is the rate error, broken at steps: a step is a jump between consecutive
// probes that the fitted rate and both probes' bounds cannot explain. Steps
// are found greedily, largest first, refitting after each, so a step does
// not inflate the rate and a rate does not look like a string of steps.
// Because the fit also carries a worst-case bound on its slope, RTT jitter —
// however it is spread between the request and the reply — never produces a
// false step.
//
// [Report.CheckWriteBehind] refuses when, widened by its measurement bound,
// the drift over one term (rate × T_lease), any single step, or the drift
// and the steps within one term together exceed S. It judges magnitudes, not
// signs: a store clock that steps back on failover steps forward by as much
// on failing back, and the direction one sample happened to see is luck.
//
// Sampling ([Sample]) waits on the injected clock's timers, so tests drive it
// with clock.Fake and never sleep.
package doctor
