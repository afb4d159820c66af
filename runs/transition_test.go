package runs

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

// TestTransition is the run state machine's rule matrix: every transition
// from every state, with the current fence and a stale one.
func TestTransition(t *testing.T) {
	t.Parallel()
	st := func(state State, fence int64, attempt int) Status {
		return Status{State: state, Fence: fence, Attempt: attempt, MaxAttempts: 3}
	}
	cases := []struct {
		name string
		from Status
		ev   Event
		want Status
		err  error
	}{
		{"claim available", st(StateAvailable, 4, 1), Event{Op: OpClaim}, st(StateRunning, 5, 2), nil},
		{"claim running", st(StateRunning, 4, 1), Event{Op: OpClaim}, st(StateRunning, 4, 1), lease.ErrConflict},
		{"claim blocked", st(StateBlocked, 4, 1), Event{Op: OpClaim}, st(StateBlocked, 4, 1), lease.ErrConflict},
		{"claim completed", st(StateCompleted, 4, 1), Event{Op: OpClaim}, st(StateCompleted, 4, 1), lease.ErrConflict},

		{"complete held", st(StateRunning, 4, 1), Event{Op: OpComplete, Fence: 4}, st(StateCompleted, 4, 1), nil},
		{"complete held, lease expired but not reclaimed", st(StateRunning, 4, 1), Event{Op: OpComplete, Fence: 4, Expired: true}, st(StateCompleted, 4, 1), nil},
		{"complete stale fence", st(StateRunning, 5, 2), Event{Op: OpComplete, Fence: 4}, st(StateRunning, 5, 2), lease.ErrFenced},
		{"complete newer fence", st(StateRunning, 4, 1), Event{Op: OpComplete, Fence: 5}, st(StateRunning, 4, 1), lease.ErrFenced},
		{"complete after reclaim", st(StateAvailable, 5, 1), Event{Op: OpComplete, Fence: 4}, st(StateAvailable, 5, 1), lease.ErrFenced},
		{"complete twice", st(StateCompleted, 4, 1), Event{Op: OpComplete, Fence: 4}, st(StateCompleted, 4, 1), lease.ErrFenced},
		{"complete cancelled", st(StateCancelled, 5, 1), Event{Op: OpComplete, Fence: 4}, st(StateCancelled, 5, 1), lease.ErrFenced},
		{"complete blocked same fence", st(StateBlocked, 4, 1), Event{Op: OpComplete, Fence: 4}, st(StateBlocked, 4, 1), lease.ErrFenced},

		{"snooze held", st(StateRunning, 4, 2), Event{Op: OpSnooze, Fence: 4, MaxSnoozes: 1}, Status{State: StateAvailable, Fence: 4, Attempt: 1, MaxAttempts: 3, Snoozes: 1}, nil},
		{"snooze held, last attempt", st(StateRunning, 4, 3), Event{Op: OpSnooze, Fence: 4, MaxSnoozes: 1}, Status{State: StateAvailable, Fence: 4, Attempt: 2, MaxAttempts: 3, Snoozes: 1}, nil},
		{"snooze past its bound", Status{State: StateRunning, Fence: 4, Attempt: 1, MaxAttempts: 3, Snoozes: 2}, Event{Op: OpSnooze, Fence: 4, MaxSnoozes: 2}, Status{State: StateRunning, Fence: 4, Attempt: 1, MaxAttempts: 3, Snoozes: 2}, lease.ErrConflict},
		{"snooze stale fence", st(StateRunning, 5, 2), Event{Op: OpSnooze, Fence: 4, MaxSnoozes: 1}, st(StateRunning, 5, 2), lease.ErrFenced},
		{"snooze after reclaim", st(StateAvailable, 5, 1), Event{Op: OpSnooze, Fence: 4, MaxSnoozes: 1}, st(StateAvailable, 5, 1), lease.ErrFenced},
		{"snooze cancelled", st(StateCancelled, 5, 1), Event{Op: OpSnooze, Fence: 4, MaxSnoozes: 1}, st(StateCancelled, 5, 1), lease.ErrFenced},

		{"fail with attempts left", st(StateRunning, 4, 2), Event{Op: OpFail, Fence: 4}, st(StateAvailable, 4, 2), nil},
		{"fail last attempt", st(StateRunning, 4, 3), Event{Op: OpFail, Fence: 4}, st(StateFailed, 4, 3), nil},
		{"fail stale", st(StateRunning, 5, 2), Event{Op: OpFail, Fence: 4}, st(StateRunning, 5, 2), lease.ErrFenced},

		{"block held", st(StateRunning, 4, 1), Event{Op: OpBlock, Fence: 4}, st(StateBlocked, 4, 1), nil},
		{"block stale", st(StateRunning, 5, 1), Event{Op: OpBlock, Fence: 4}, st(StateRunning, 5, 1), lease.ErrFenced},

		{"reclaim expired, attempts left", st(StateRunning, 4, 1), Event{Op: OpReclaim, Expired: true}, st(StateAvailable, 5, 1), nil},
		{"reclaim expired, attempts spent", st(StateRunning, 4, 3), Event{Op: OpReclaim, Expired: true}, st(StateFailed, 5, 3), nil},
		{"reclaim live lease", st(StateRunning, 4, 1), Event{Op: OpReclaim}, st(StateRunning, 4, 1), lease.ErrConflict},
		{"reclaim available", st(StateAvailable, 4, 1), Event{Op: OpReclaim, Expired: true}, st(StateAvailable, 4, 1), lease.ErrConflict},

		{"cancel available", st(StateAvailable, 4, 1), Event{Op: OpCancel}, st(StateCancelled, 5, 1), nil},
		{"cancel running", st(StateRunning, 4, 1), Event{Op: OpCancel}, st(StateCancelled, 5, 1), nil},
		{"cancel blocked", st(StateBlocked, 4, 1), Event{Op: OpCancel}, st(StateCancelled, 5, 1), nil},
		{"cancel completed", st(StateCompleted, 4, 1), Event{Op: OpCancel}, st(StateCompleted, 4, 1), lease.ErrConflict},
		{"cancel failed", st(StateFailed, 4, 3), Event{Op: OpCancel}, st(StateFailed, 4, 3), lease.ErrConflict},
		{"cancel cancelled", st(StateCancelled, 5, 1), Event{Op: OpCancel}, st(StateCancelled, 5, 1), lease.ErrConflict},

		{"unblock blocked", st(StateBlocked, 4, 1), Event{Op: OpUnblock}, st(StateAvailable, 4, 1), nil},
		{"unblock available", st(StateAvailable, 4, 1), Event{Op: OpUnblock}, st(StateAvailable, 4, 1), lease.ErrConflict},
		{"unblock running", st(StateRunning, 4, 1), Event{Op: OpUnblock}, st(StateRunning, 4, 1), lease.ErrConflict},

		{"unknown op", st(StateRunning, 4, 1), Event{Op: "hibernate"}, st(StateRunning, 4, 1), lease.ErrInvalid},
	}
	for _, c := range cases {
		got, err := Transition(c.from, c.ev)
		if c.err == nil {
			require.NoError(t, err, c.name)
		} else {
			require.ErrorIs(t, err, c.err, c.name)
		}
		require.Equal(t, c.want, got, c.name)
	}
}

// TestTransitionInvariants checks, over every state and op, what the
// fencing argument rests on: the fence never decreases; every lease change
// that ends or moves a lease (reclaim, cancel) raises it; a final state is
// never left; a refused transition changes nothing.
func TestTransitionInvariants(t *testing.T) {
	t.Parallel()
	states := []State{StateAvailable, StateRunning, StateBlocked, StateCompleted, StateFailed, StateCancelled}
	ops := []Op{OpClaim, OpComplete, OpFail, OpBlock, OpReclaim, OpCancel, OpUnblock, OpSnooze}
	for _, state := range states {
		for attempt := 1; attempt <= 3; attempt++ {
			for _, op := range ops {
				for _, fence := range []int64{6, 7, 8} {
					for _, expired := range []bool{false, true} {
						from := Status{State: state, Fence: 7, Attempt: attempt, MaxAttempts: 3}
						got, err := Transition(from, Event{Op: op, Fence: fence, Expired: expired, MaxSnoozes: attempt - 1})
						if err != nil {
							require.Equal(t, from, got, "%v %s: a refusal changes nothing", from, op)
							require.True(t, errors.Is(err, lease.ErrFenced) || errors.Is(err, lease.ErrConflict), "%v", err)
							continue
						}
						require.GreaterOrEqual(t, got.Fence, from.Fence, "%v %s: the fence never decreases", from, op)
						require.False(t, from.State.Final(), "%v %s: a final state was left", from, op)
						if op == OpReclaim || op == OpCancel || op == OpClaim {
							require.Equal(t, from.Fence+1, got.Fence, "%v %s raises the fence", from, op)
						}
						if op == OpComplete || op == OpFail || op == OpBlock || op == OpSnooze {
							require.Equal(t, fence, from.Fence, "%v %s accepted only under the current fence", from, op)
						}
						require.True(t, got.State.Valid())
					}
				}
			}
		}
	}
}
