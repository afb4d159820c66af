package runs

import (
	"slices"
	"time"
)

// Unique keys scoped by state and period (issue 16). A run holds its
// unique key while its state is one of its UniqueStates and, with a
// UniquePeriod, only for enqueues in the same period bucket of the store
// clock. The store enforces it with one partial unique index over (key,
// bucket) whose predicate is the run's own state-in-set test, so the rule
// holds under concurrency on both stores.

// The state bits of a unique-states set, as the stores keep it
// (runs.unique_states).
var stateBits = map[State]int{
	StateAvailable: 1, StateRunning: 2, StateBlocked: 4,
	StateCompleted: 8, StateFailed: 16, StateCancelled: 32,
}

// requiredUniqueStates are in every set: a run moves freely between them
// (a retry, a snooze, a block), so were one left out, a run coming back to
// it could collide with a newer run of its key.
var requiredUniqueStates = []State{StateAvailable, StateRunning, StateBlocked}

// DefaultUniqueStates is the default: queued, running, blocked or
// completed (a completed run holds its key until the cleaner deletes it,
// after Retention.Completed); a failed or cancelled run frees it.
func DefaultUniqueStates() []State {
	return []State{StateAvailable, StateRunning, StateBlocked, StateCompleted}
}

// AllStates is the set that holds a key for the life of its run, in any
// state (the rule before scoped keys, and the one periodic runs use).
func AllStates() []State {
	return []State{StateAvailable, StateRunning, StateBlocked, StateCompleted, StateFailed, StateCancelled}
}

// MaxUniquePeriod bounds a unique period.
const MaxUniquePeriod = 366 * 24 * time.Hour

// UniqueMask is e's unique-states set as the stores keep it.
func (e *Enqueue) UniqueMask() int {
	m := 0
	for _, s := range e.UniqueStates {
		m |= stateBits[s]
	}
	return m
}

// UniqueBucket is the start, in Unix microseconds, of the period of
// e.UniquePeriod that store time nowMicros falls in (0 without a period).
func (e *Enqueue) UniqueBucket(nowMicros int64) int64 {
	p := e.UniquePeriod.Microseconds()
	if p <= 0 {
		return 0
	}
	return nowMicros - nowMicros%p
}

// validateUnique checks the scope of a unique key and fills its default.
func validateUnique(e *Enqueue) error {
	if e.UniqueKey == "" {
		if e.UniqueStates != nil || e.UniquePeriod != 0 {
			return invalid("unique_states", "unique states and a unique period need a unique key")
		}
		return nil
	}
	if e.UniquePeriod != 0 && (e.UniquePeriod < time.Second || e.UniquePeriod > MaxUniquePeriod || e.UniquePeriod%time.Microsecond != 0) {
		return invalid("unique_period", "%s is outside 1s..%s (or not whole microseconds)", e.UniquePeriod, MaxUniquePeriod)
	}
	if e.UniqueStates == nil {
		e.UniqueStates = DefaultUniqueStates()
		return nil
	}
	for _, s := range e.UniqueStates {
		if _, ok := stateBits[s]; !ok {
			return invalid("unique_states", "%q is not a run state", s)
		}
	}
	for _, s := range requiredUniqueStates {
		if !slices.Contains(e.UniqueStates, s) {
			return invalid("unique_states", "%q is missing: a unique key is always held while its run is available, running or blocked", s)
		}
	}
	return nil
}
