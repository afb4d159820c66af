package lease

import (
	"errors"
	"fmt"
	"time"
)

// MinTiming is the smallest value Validate accepts for any timing field.
// Expiries and terms are stored with microsecond resolution (a world's
// default_term_us, every expires_at), so a shorter term would store as zero
// and disable what it times (issue 17: a 5ns world term validated, stored
// as 0 µs, and the expiry sweep could never plan that world again); and no
// lease protocol that crosses a network can renew, drain or poll faster
// than a millisecond. Sub-microsecond parts of longer values are dropped
// when stored, an error below 0.1% at this minimum.
const MinTiming = time.Millisecond

// absurdTiming is the largest value Validate accepts for any timing field.
// Nothing in a lease protocol needs a day; a larger value is almost always a
// unit mistake (seconds read as minutes) and would also push the arithmetic
// towards its saturation limits.
const absurdTiming = 24 * time.Hour

// Validate reports every problem with t, each a *TimingError naming its
// values; several are joined with errors.Join. The result matches
// ErrInvalidTiming. It checks that:
//
//   - every field is at least MinTiming (1ms) and at most 24h;
//   - D_stop + S < T_lease: a holder must stop itself before anyone may
//     reclaim;
//   - T_renew + T_drain < D_stop: normal upkeep must never look like lag.
//
// The relations are only checked once every field is in range, since a
// comparison of out-of-range values would only repeat the same problem.
func (t Timing) Validate() error {
	var errs []error
	for _, f := range t.fields() {
		switch {
		case f.value <= 0:
			errs = append(errs, &TimingError{
				Field:  f.symbol,
				Detail: fmt.Sprintf("%s (%v) must be > 0", f.symbol, f.value),
				Rule:   "every lease timing is a positive duration",
			})
		case f.value < MinTiming:
			errs = append(errs, &TimingError{
				Field:  f.symbol,
				Detail: fmt.Sprintf("%s (%v) must be >= %v", f.symbol, f.value, MinTiming),
				Rule:   "terms are stored in microseconds and no lease upkeep runs faster than a millisecond",
			})
		case f.value > absurdTiming:
			errs = append(errs, &TimingError{
				Field:  f.symbol,
				Detail: fmt.Sprintf("%s (%v) must be <= %v", f.symbol, f.value, absurdTiming),
				Rule:   "a longer value is absurd (a unit mistake?)",
			})
		}
	}
	if len(errs) == 0 {
		errs = t.relationErrors()
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0] // keep the common case a plain *TimingError
	default:
		return errors.Join(errs...)
	}
}

// relationErrors checks the SPEC §1 inequalities between fields.
func (t Timing) relationErrors() []error {
	var errs []error
	if sum := AddSat(t.Stop, t.Skew); sum >= t.Lease {
		errs = append(errs, &TimingError{
			Field: "D_stop",
			Detail: fmt.Sprintf("D_stop (%v) + S (%v) = %v must be < T_lease (%v)",
				t.Stop, t.Skew, sum, t.Lease),
			Rule: "a holder must stop itself before anyone may reclaim",
		})
	}
	if sum := AddSat(t.Renew, t.Drain); sum >= t.Stop {
		errs = append(errs, &TimingError{
			Field: "T_renew",
			Detail: fmt.Sprintf("T_renew (%v) + T_drain (%v) = %v must be < D_stop (%v)",
				t.Renew, t.Drain, sum, t.Stop),
			Rule: "normal upkeep must never look like lag",
		})
	}
	return errs
}

// timingField pairs a field's SPEC symbol with its value, for messages.
type timingField struct {
	symbol string
	value  time.Duration
}

func (t Timing) fields() [7]timingField {
	return [...]timingField{
		{"T_lease", t.Lease},
		{"T_renew", t.Renew},
		{"T_drain", t.Drain},
		{"D_stop", t.Stop},
		{"S", t.Skew},
		{"P", t.Poll},
		{"margin", t.Margin},
	}
}
