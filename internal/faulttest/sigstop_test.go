package faulttest

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/witness"
)

// TestPausedWorkerIsFencedOut (SPEC §2, §3, §5): the paused process, the
// case the gate cannot stop. Of three worker processes, one passes the gate
// for an effect, records its intent and is stopped with SIGSTOP right
// before its call downstream. It stays stopped past its lease: the
// reclaimer takes its runs back and the other workers re-run them — the
// stopped worker's effect is uncertain to them, the witness says it never
// happened, so they run it under their higher fence. Then the worker is
// continued (SIGCONT) and makes its call, still carrying its old fence:
// the witness refuses it as lower than the one it accepted, and the store
// refuses the stale holder's effect commit, run completion and event with
// ErrFenced. Every run completes, once.
func TestPausedWorkerIsFencedOut(t *testing.T) {
	t.Parallel()
	s := newScenario(t, sharedDatabase(t), scenarioConfig{Runs: 30, Effects: 4, EffectWork: 250 * time.Millisecond})
	paused := s.startWorker("pause-a", func(c *workerConfig) { c.PauseAt = effectKey(1) })
	s.startWorker("pause-b")
	s.startWorker("pause-c")
	s.awaitStarted()

	at := s.awaitSignal(sigPausePoint, paused.owner)
	require.NoError(t, paused.cmd.Process.Signal(syscall.SIGSTOP))
	stopped := time.Now()
	held := s.heldBy(paused.owner)
	require.Equal(t, at.Fence, held[at.Run], "the paused worker held run %d under fence %d", at.Run, at.Fence)
	// Stopped until every run it held was reclaimed and completed by the
	// others, so that each key its late calls could carry was accepted
	// under a higher fence first (see the package doc).
	s.awaitReclaimed(paused.owner, held)
	s.awaitCompleted(held)
	require.NoError(t, paused.cmd.Process.Signal(syscall.SIGCONT))
	t.Logf("%s stopped for %v at effect %s (fence %d), holding runs %v (run → fence)",
		paused.owner, time.Since(stopped).Round(time.Millisecond), at.Key, at.Fence, held)
	s.obs.release(releaseLate(paused.owner))

	late := s.awaitSignal(sigLate, paused.owner)
	require.Equal(t, map[string]string{"invoke": "refused", "commit": "fenced", "complete": "fenced", "step": "fenced"}, late.Detail,
		"the stale holder's late call and writes")
	var calls []witness.Invocation
	for _, in := range s.obs.wit.Invocations() {
		if in.Key == at.Key {
			calls = append(calls, in)
		}
	}
	require.NotEmpty(t, calls)
	require.Equal(t, witness.Invocation{Key: at.Key, Fence: at.Fence, Accepted: false}, calls[len(calls)-1],
		"the late call came last and was refused: %v", calls)
	require.Equal(t, 1, s.obs.wit.Accepted()[at.Key], "accepted once: %v", calls)
	for _, in := range calls[:len(calls)-1] {
		require.Greater(t, in.Fence, at.Fence, "the re-run's call carried a higher fence: %v", calls)
	}

	s.awaitFinal()
	s.stopWorkers()
	f := s.check(checkOptions{lateAllowed: true})
	require.Equal(t, f.runs, f.completed, "every run completed")
	require.Positive(t, f.late, "the late call reached the witness after its lease expired")
	require.Positive(t, f.reports[at.Key], "the re-run found %s uncertain and reported it", at.Key)
}
