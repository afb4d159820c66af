package lease

import "time"

// Runway returns how long a holder may still act under its lease:
//
//	runway = (sendTime + T_lease) - now - S
//
// saturating, and 0 when that is negative or when sendTime is zero: a holder
// has zero runway until a write that set the expiry was confirmed.
//
// sendTime is when the holder sent the write that set the expiry (the claim,
// a renewal flush, a grant or a handoff request), not when the answer
// arrived. The store set the expiry at some instant between the two, on its
// own clock; measuring from the send takes the earliest such instant, so the
// runway can only be underestimated, however slow the round trip was.
// Measuring from the arrival would credit the holder with the round trip's
// duration that the store had already counted down.
//
// sendTime and now must come from the same monotonic clock (an injected
// clock.Clock, whose real Now keeps the monotonic reading). Then the
// app↔store clock offset cancels out, and only the store clock running
// ahead within a term matters, which S bounds.
func Runway(sendTime, now time.Time, t Timing) time.Duration {
	if sendTime.IsZero() {
		return 0
	}
	expiry := AddTime(sendTime, t.Lease)
	return max(SubSat(expiry.Sub(now), t.Skew), 0)
}
