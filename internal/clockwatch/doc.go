// Package clockwatch watches the store's clock at runtime, between the
// start-up check (internal/doctor) and the next one that never comes.
//
// Every claim, synchronous renewal and drain already learns the store's
// time: the store wrote expires_at = store_now + T_lease (or the drain
// returns store_now). Each such round trip is an NTP-style probe: the store
// read its clock somewhere between the holder's send and the answer, so
// store − midpoint is the app↔store offset within ±RTT/2. The offset itself
// means nothing (SPEC §1); its *change* within one lease term is what S
// bounds — a store clock that steps or runs fast expires leases early by
// as much as it gained.
//
// Watch keeps the probes of the last term in a few buckets (constant
// memory, however many claims arrive) and, at each new probe, compares it
// with every bucket. When the offset moved by more than S for certain
// (beyond both probes' bounds) the watch raises an alarm: Excess is the
// most it may have moved beyond S (the movement at its worst within the
// bounds, less S), and it stays in force until the evidence from before
// the move is one term old — by then every lease whose runway was counted
// from a send before the move has had to be renewed on the moved clock or
// has run out. The caller (the keeper) shortens the runway it trusts by
// Excess while the alarm is in force, and logs and counts each transition.
//
// Magnitudes are judged, not signs, as the doctor does: a store that
// stepped back (failover) steps forward when it fails back.
//
// The package is pure: times are passed in (monotonic offsets on the
// caller's clock and the store's wall reading), so every rule is tested
// without a clock or a store.
package clockwatch
