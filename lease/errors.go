package lease

import "errors"

var (
	// ErrInvalidTiming is matched (via errors.Is) by every *TimingError, so
	// callers can tell a configuration mistake from other start-up failures.
	ErrInvalidTiming = errors.New("invalid lease timing")

	// ErrEffectDuration is returned when an effect declares a maximum
	// duration that is not positive or that exceeds the runway a healthy
	// holder is sure to have (Timing.MaxEffect). Errors wrapping it match
	// ErrInvalid too (see CheckEffect).
	ErrEffectDuration error = &narrowSentinel{msg: "effect duration outside the lease's window", wide: ErrInvalid}
)

// narrowSentinel is a sentinel that also matches a wider one: a caller
// matching ErrInvalid catches ErrEffectDuration too, as every input a
// caller got wrong matches ErrInvalid.
type narrowSentinel struct {
	msg  string
	wide error
}

func (e *narrowSentinel) Error() string { return e.msg }

// Is makes errors.Is match the wider sentinel as well.
func (e *narrowSentinel) Is(target error) bool { return target == e.wide }

// TimingError is one problem with a Timing. Its message names the values
// involved so an operator can fix the configuration without reading code.
type TimingError struct {
	// Field is the symbol of the field at fault, e.g. "D_stop".
	Field string
	// Detail states the failed comparison with its values, e.g.
	// "D_stop (45s) + S (50s) = 1m35s must be < T_lease (1m30s)".
	Detail string
	// Rule says why the comparison matters, e.g. "a holder must stop itself
	// before anyone may reclaim".
	Rule string
}

// Error returns "lease timing: <detail>: <rule>".
func (e *TimingError) Error() string {
	return "lease timing: " + e.Detail + ": " + e.Rule
}

// Is makes errors.Is(err, ErrInvalidTiming) true, and errors.Is(err,
// ErrInvalid), as for every other configuration a caller got wrong.
func (e *TimingError) Is(target error) bool {
	return target == ErrInvalidTiming || target == ErrInvalid
}
