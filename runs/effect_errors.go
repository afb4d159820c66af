package runs

import (
	"fmt"

	"github.com/leasehold/leasehold/lease"
)

// UncertainEffectError names the uncertain effect. It unwraps to lease.ErrUncertain.
type UncertainEffectError struct {
	RunID       int64
	Key         string
	IntentFence int64 // the fence the intent was recorded under
}

func (e *UncertainEffectError) Error() string {
	return fmt.Sprintf("effect %q of run %d was started under fence %d and never committed: reconcile it and call ResolveEffect",
		e.Key, e.RunID, e.IntentFence)
}

// Unwrap returns lease.ErrUncertain.
func (e *UncertainEffectError) Unwrap() error { return lease.ErrUncertain }

// EffectResultError: an effect's fn succeeded — the side effect happened —
// but its result breaks the result rule (see the worker's RunHandle.Effect). The effect is
// recorded as done, with a marker of the refusal in place of the result,
// so a retry neither runs fn again nor reports it uncertain: it answers
// this error again. It unwraps to lease.ErrInvalid.
type EffectResultError struct {
	RunID   int64
	Key     string
	Problem string // why the result was refused
}

func (e *EffectResultError) Error() string {
	return fmt.Sprintf("effect %q of run %d happened, but its result was refused (%s): the effect is recorded as done without it",
		e.Key, e.RunID, e.Problem)
}

// Unwrap returns lease.ErrInvalid.
func (e *EffectResultError) Unwrap() error { return lease.ErrInvalid }
