package runs

import (
	"fmt"

	"github.com/leasehold/leasehold/lease"
)

// This file is the run state machine stated once, as a pure function: the
// counterpart of journal.Fold for runs. The drivers implement it in SQL
// (each transition is one conditional UPDATE whose WHERE is the guard
// below); the conformance suite checks the drivers against it and the
// simulator's porcupine model is this function, so the rule a write must
// pass is written in one place and read in three.
//
//	            claim (fence+1, attempt+1)
//	available ─────────────────────────────▶ running ── complete ──▶ completed
//	    ▲  ▲                                 │  │  │
//	    │  └──── fail / reclaim (fence+1) ───┘  │  └── fail / reclaim, attempts spent ──▶ failed
//	    │        while attempts remain          │
//	    └─────── unblock ◀── blocked ◀── block ─┘
//
//	cancel (fence+1): available | running | blocked ──▶ cancelled
//	snooze (attempt-1, snoozes+1, while snoozes < bound): running ──▶ available
//
// completed, failed and cancelled are final: no transition leaves them.

// Op is a transition's name.
type Op string

// The transitions. Complete, Fail and Block are the holder's fenced writes;
// Claim and Reclaim the store's lease changes; Cancel and Unblock operator
// actions that carry no fence.
const (
	OpClaim    Op = "claim"
	OpComplete Op = "complete"
	OpFail     Op = "fail"
	OpBlock    Op = "block"
	OpReclaim  Op = "reclaim"
	OpCancel   Op = "cancel"
	OpUnblock  Op = "unblock"
	OpSnooze   Op = "snooze"
)

// Status is the part of a run's row that its transitions read and write.
type Status struct {
	State       State
	Fence       int64
	Attempt     int
	MaxAttempts int
	Snoozes     int // snoozes over the run's life; never reset
}

// Event is one transition asked of a run.
type Event struct {
	Op Op
	// Fence is the writer's fence: the holder's for Complete, Fail and
	// Block. The others ignore it.
	Fence int64
	// Expired says the run's lease has expired on the store clock: Reclaim
	// requires it (the reclaimer selects only such runs), and a holder's
	// write is refused by the store once the reclaim happened, not before.
	Expired bool
	// MaxSnoozes bounds Snooze: a run that snoozed this often is refused
	// with ErrConflict (the store's SnoozeLimitError), unchanged.
	MaxSnoozes int
}

// Transition applies e to s. It returns the status after, or the error the
// store answers without changing anything:
//
//   - lease.ErrFenced for a holder's write whose fence is not the current
//     one, or which finds the run no longer running (reclaimed, cancelled,
//     finished): the write is discarded, never half-applied;
//   - lease.ErrConflict for an operator action or a lease change the run's
//     state does not allow (cancel of a final run, unblock of a run that is
//     not blocked, claim of a run that is not available, reclaim of a live
//     lease), and for a snooze past its bound.
func Transition(s Status, e Event) (Status, error) {
	held := s.State == StateRunning && s.Fence == e.Fence
	switch e.Op {
	case OpClaim:
		if s.State != StateAvailable {
			return s, conflict(s, e)
		}
		s.State, s.Fence, s.Attempt = StateRunning, s.Fence+1, s.Attempt+1
		return s, nil
	case OpComplete:
		if !held {
			return s, fenced(s, e)
		}
		s.State = StateCompleted
		return s, nil
	case OpFail:
		if !held {
			return s, fenced(s, e)
		}
		s.State = afterAttempt(s)
		return s, nil
	case OpBlock:
		if !held {
			return s, fenced(s, e)
		}
		s.State = StateBlocked
		return s, nil
	case OpSnooze:
		if !held {
			return s, fenced(s, e)
		}
		if s.Snoozes >= e.MaxSnoozes {
			return s, conflict(s, e)
		}
		// The attempt is given back: the next claim's attempt+1 makes it
		// the same attempt again.
		s.State, s.Attempt, s.Snoozes = StateAvailable, s.Attempt-1, s.Snoozes+1
		return s, nil
	case OpReclaim:
		if s.State != StateRunning || !e.Expired {
			return s, conflict(s, e)
		}
		s.State, s.Fence = afterAttempt(s), s.Fence+1
		return s, nil
	case OpCancel:
		if s.State.Final() {
			return s, conflict(s, e)
		}
		s.State, s.Fence = StateCancelled, s.Fence+1
		return s, nil
	case OpUnblock:
		if s.State != StateBlocked {
			return s, conflict(s, e)
		}
		s.State = StateAvailable
		return s, nil
	}
	return s, fmt.Errorf("runs: unknown transition %q: %w", e.Op, lease.ErrInvalid)
}

// afterAttempt is where a failed or reclaimed attempt leaves a run: back
// in the queue while attempts remain, failed once they are spent.
func afterAttempt(s Status) State {
	if s.Attempt >= s.MaxAttempts {
		return StateFailed
	}
	return StateAvailable
}

func fenced(s Status, e Event) error {
	return fmt.Errorf("runs: %s under fence %d refused: run is %s under fence %d: %w",
		e.Op, e.Fence, s.State, s.Fence, lease.ErrFenced)
}

func conflict(s Status, e Event) error {
	return fmt.Errorf("runs: %s refused: run is %s: %w", e.Op, s.State, lease.ErrConflict)
}
