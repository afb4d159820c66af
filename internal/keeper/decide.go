package keeper

import (
	"time"

	"github.com/leasehold/leasehold/lease"
)

// The decisions below are pure functions of the timing and two readings of
// one monotonic clock, expressed as offsets from the keeper's base reading:
// sent, the send time of the holder's last confirmed expiry-setting write
// (the claim, a drain flush, a synchronous renewal or the gate's flush),
// and now. Arithmetic saturates, so a deadline long past is merely past.

// Lag is the holder's durable lag: the time since the send of its last
// confirmed expiry-setting write. Never negative.
func Lag(sent, now time.Duration) time.Duration {
	return max(lease.SubSat(now, sent), 0)
}

// Runway is (sent + T_lease) - now - S, at least 0: how long the holder
// may be sure its lease still holds on the store clock. It counts from the
// send, not the answer: the store set the expiry at some instant between
// the two, and the send is the earliest.
func Runway(t lease.Timing, sent, now time.Duration) time.Duration {
	return max(lease.SubSat(lease.SubSat(t.Lease, Lag(sent, now)), t.Skew), 0)
}

// Available is what the gate compares with an effect's need:
// min(runway, D_stop - lag), at least 0. The second term keeps an effect
// from starting that would still be running when the holder must stop
// itself.
func Available(t lease.Timing, sent, now time.Duration) time.Duration {
	return max(min(Runway(t, sent, now), lease.SubSat(t.Stop, Lag(sent, now))), 0)
}

// Needed is an effect's declared maximum duration plus the gate's margin.
func Needed(t lease.Timing, maxDur time.Duration) time.Duration {
	return lease.AddSat(max(maxDur, 0), t.Margin)
}

// GatePasses is the gate's pure-local check: Available >= Needed.
func GatePasses(t lease.Timing, sent, now, maxDur time.Duration) bool {
	return Available(t, sent, now) >= Needed(t, maxDur)
}

// MustStop is the self-stop rule: durable lag >= D_stop.
func MustStop(t lease.Timing, sent, now time.Duration) bool {
	return Lag(sent, now) >= t.Stop
}

// GateBound is the gate's precomputed limit, min(T_lease - S, D_stop): a
// holder's Available is GateBound - lag (at least 0). The keeper computes
// it once from its timing, so the gate's happy path is one clock reading,
// one subtraction and two comparisons (GatePassesBound).
func GateBound(t lease.Timing) time.Duration {
	return min(lease.SubSat(t.Lease, t.Skew), t.Stop)
}

// GatePassesBound is GatePasses with the timing folded into bound
// (GateBound) and margin (T.Margin): Available >= Needed rewritten as
// lag <= bound - need. FuzzGateBound holds the two equal for every valid
// timing and any readings.
func GatePassesBound(bound, margin, sent, now, maxDur time.Duration) bool {
	need := lease.AddSat(max(maxDur, 0), margin)
	if need <= 0 {
		return true // Available is never negative
	}
	return max(lease.SubSat(now, sent), 0) <= lease.SubSat(bound, need)
}
