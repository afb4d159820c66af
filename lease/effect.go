package lease

import (
	"fmt"
	"time"
)

// MaxEffect returns the longest maximum duration an effect may declare:
//
//	min(T_lease - S - T_renew - T_drain, D_stop - margin)
//
// or 0 if that is negative. The first term is SPEC §1's: the runway a
// healthy holder is sure to have, since its last confirmed write may be up
// to one renewal plus one drain period old. The second is the gate's own
// limit: the gate passes only when min(runway, D_stop - lag) >= maxDur +
// margin, and lag is never below 0, so an effect longer than D_stop -
// margin could never pass it however fresh the lease (with the defaults,
// 40 s, tighter than the first term's 55 s). Refusing it when declared
// beats refusing it at run time, every time.
func (t Timing) MaxEffect() time.Duration {
	return max(min(t.maxEffectRunway(), SubSat(t.Stop, t.Margin)), 0)
}

func (t Timing) maxEffectRunway() time.Duration {
	return SubSat(SubSat(SubSat(t.Lease, t.Skew), t.Renew), t.Drain)
}

// CheckEffect refuses an effect's declared maximum duration when it is not
// positive or exceeds MaxEffect. It runs when the effect is declared, so a
// handler learns at once of an effect that a healthy holder could not be
// sure to run, rather than from the gate refusing it at run time. The error
// matches ErrEffectDuration.
func (t Timing) CheckEffect(maxDur time.Duration) error {
	if maxDur <= 0 {
		return fmt.Errorf("lease: effect max duration %v must be > 0: %w", maxDur, ErrEffectDuration)
	}
	if limit := t.MaxEffect(); maxDur > limit {
		return fmt.Errorf("lease: effect max duration %v exceeds min(T_lease (%v) - S (%v) - T_renew (%v) - T_drain (%v) = %v, D_stop (%v) - margin (%v) = %v) = %v, the longest effect the gate can pass: %w",
			maxDur, t.Lease, t.Skew, t.Renew, t.Drain, t.maxEffectRunway(), t.Stop, t.Margin, SubSat(t.Stop, t.Margin), limit, ErrEffectDuration)
	}
	return nil
}
