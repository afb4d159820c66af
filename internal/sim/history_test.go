package sim

import (
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/runs"
)

// TestRunModelRejectsASplitBrain: the porcupine model (runs.Transition)
// accepts a clean claim → reclaim → claim → complete history and rejects
// the same history in which the first holder's completion, under the fence
// the reclaim ended, was also accepted — the split brain every seed checks
// for — so a clean porcupine verdict on a seed means something.
func TestRunModelRejectsASplitBrain(t *testing.T) {
	t.Parallel()
	op := func(client int, call, ret int64, in runInput, out runOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: in, Output: out}
	}
	clean := []porcupine.Operation{
		op(1, 0, 1, runInput{run: 1, kind: opClaim}, runOutput{ok: true, fence: 1, state: runs.StateRunning}),
		op(-1, 2, 3, runInput{run: 1, kind: opReclaim}, runOutput{ok: true, fence: 2, state: runs.StateAvailable}),
		op(2, 4, 5, runInput{run: 1, kind: opClaim}, runOutput{ok: true, fence: 3, state: runs.StateRunning}),
		op(1, 6, 7, runInput{run: 1, kind: opComplete, fence: 1}, runOutput{ok: false}),
		op(2, 8, 9, runInput{run: 1, kind: opComplete, fence: 3}, runOutput{ok: true}),
	}
	require.True(t, porcupine.CheckOperations(runModel, clean))

	split := append([]porcupine.Operation(nil), clean...)
	split[3] = op(1, 6, 7, runInput{run: 1, kind: opComplete, fence: 1}, runOutput{ok: true})
	require.False(t, porcupine.CheckOperations(runModel, split))

	// A claim that answers with a fence that skips one is no claim either.
	skip := append([]porcupine.Operation(nil), clean[:2]...)
	skip = append(skip, op(2, 4, 5, runInput{run: 1, kind: opClaim}, runOutput{ok: true, fence: 4, state: runs.StateRunning}))
	require.False(t, porcupine.CheckOperations(runModel, skip))
}
