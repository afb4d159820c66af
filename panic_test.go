package leasehold_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// explode is the frame a panicking handler's recorded stack must start at.
//
//go:noinline
func explode(what string) { panic("boom: " + what) }

// TestPanicFailsTheAttemptWithItsStackAndTheWorkerKeepsWorking: on both
// stores, a handler that panics fails its attempt (as an error would) with
// the panic's value and its stack — starting at the frame that panicked —
// as the reason; the same worker, one slot wide, then works the next run.
func TestPanicFailsTheAttemptWithItsStackAndTheWorkerKeepsWorking(t *testing.T) {
	t.Parallel()
	for k, s := range hostileClients {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			c := snoozeClient(t, k, leasehold.WorkerConfig{Queues: map[string]int{"q": 1}}, func(_ context.Context, r *leasehold.RunHandle) error {
				if string(r.Payload) == `"panic"` {
					explode("the handler's own frame")
				}
				return nil
			})
			ctx := context.Background()
			enq, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q", Payload: []byte(`"panic"`), MaxAttempts: 1},
				leasehold.Enqueue{Queue: "q", Payload: []byte(`"ok"`)})
			require.NoError(t, err)
			failed := settled(t, c, enq[0].Run.ID, func(r *leasehold.Run) bool { return r.State == runs.StateFailed })
			head, stack, ok := strings.Cut(failed.Reason, "\n")
			require.True(t, ok, "no stack in %q", failed.Reason)
			require.Equal(t, "handler panicked: boom: the handler's own frame", head)
			first, _, _ := strings.Cut(stack, "\n")
			require.Contains(t, first, "leasehold_test.explode(", "the stack starts at the panicking frame:\n%s", stack)
			require.Contains(t, stack, "panic_test.go:", "with its file and line")
			require.NoError(t, journal.ValidateReason("reason", failed.Reason), "a stack fits the reason rule")
			t.Logf("%s: recorded reason (%d bytes):\n%s", s.name, len(failed.Reason), failed.Reason)

			done := settled(t, c, enq[1].Run.ID, func(r *leasehold.Run) bool { return r.State == runs.StateCompleted })
			require.Equal(t, 1, done.Attempt, "the worker kept working after the panic")
		})
	}
}
