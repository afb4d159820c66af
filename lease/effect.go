package lease

import (
	"fmt"
	"time"
)

// MaxEffect returns the longest maximum duration an effect may declare:
// T_lease - S - T_renew - T_drain, or 0 if that is negative. It is the
// runway a healthy holder is sure to have, since its last confirmed write
// may be up to one renewal plus one drain period old.
func (t Timing) MaxEffect() time.Duration {
	d := SubSat(SubSat(SubSat(t.Lease, t.Skew), t.Renew), t.Drain)
	return max(d, 0)
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
		return fmt.Errorf("lease: effect max duration %v exceeds T_lease (%v) - S (%v) - T_renew (%v) - T_drain (%v) = %v, the runway a healthy holder is sure to have: %w",
			maxDur, t.Lease, t.Skew, t.Renew, t.Drain, limit, ErrEffectDuration)
	}
	return nil
}
