package runs

// State is where a run is in its life.
type State string

// The run states.
const (
	StateAvailable State = "available" // waiting to be claimed once scheduled_at has passed
	StateRunning   State = "running"   // claimed: owner holds the lease under fence
	StateBlocked   State = "blocked"   // waiting on an external signal; no lease; Unblock makes it available
	StateCompleted State = "completed" // finished; final
	StateFailed    State = "failed"    // attempts exhausted, with a reason; final
	StateCancelled State = "cancelled" // cancelled by an operator; final
)

// Final reports whether no transition leaves s.
func (s State) Final() bool {
	return s == StateCompleted || s == StateFailed || s == StateCancelled
}

// Valid reports whether s is one of the run states.
func (s State) Valid() bool {
	switch s {
	case StateAvailable, StateRunning, StateBlocked, StateCompleted, StateFailed, StateCancelled:
		return true
	}
	return false
}
