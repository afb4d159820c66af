package runs

import "time"

// Retention defaults (River's cleaner keeps completed jobs 24 h and
// discarded or cancelled ones 7 days: the same here).
const (
	DefaultCompletedRetention = 24 * time.Hour
	DefaultFailedRetention    = 7 * 24 * time.Hour
	DefaultCancelledRetention = 7 * 24 * time.Hour
	// MaxRetention bounds a retention: ten years is far past any real
	// policy, and past it the store's timestamp arithmetic is no longer
	// obviously safe. Longer means "keep forever": say 0.
	MaxRetention = 10 * 365 * 24 * time.Hour
)

// Retention is how long finished runs are kept, with their effects and
// events, after they finished (store clock), per final state. 0 keeps
// that state's runs forever.
type Retention struct {
	Completed time.Duration
	Failed    time.Duration
	Cancelled time.Duration
}

// DefaultRetention is completed 24 h, failed and cancelled 7 days.
func DefaultRetention() Retention {
	return Retention{Completed: DefaultCompletedRetention, Failed: DefaultFailedRetention, Cancelled: DefaultCancelledRetention}
}

// For returns the retention of final state s (0 for any other).
func (r Retention) For(s State) time.Duration {
	switch s {
	case StateCompleted:
		return r.Completed
	case StateFailed:
		return r.Failed
	case StateCancelled:
		return r.Cancelled
	}
	return 0
}

// Validate refuses a negative retention or one past MaxRetention, naming
// the field.
func (r Retention) Validate() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"retention.completed", r.Completed}, {"retention.failed", r.Failed}, {"retention.cancelled", r.Cancelled}} {
		if f.d < 0 || f.d > MaxRetention {
			return invalid(f.name, "%s is outside 0 (keep forever)..%s", f.d, MaxRetention)
		}
	}
	return nil
}
