package faulttest

import (
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKilledWorker (SPEC §1, §3, §5): of two worker processes, one is
// killed with SIGKILL in the middle of an effect, after the witness
// accepted its call and before the commit — no deferred code, no final
// write. Every lease it held is reclaimed within T_lease + P + S of its last
// renewal (store timestamps) and the other worker finishes those runs: it
// finds the interrupted effect uncertain, reports it, learns from the
// witness that it happened and resolves it as done, so the effect is
// accepted downstream exactly once. Every run completes.
func TestKilledWorker(t *testing.T) {
	t.Parallel()
	s := newScenario(t, sharedDatabase(t), scenarioConfig{Runs: 24, Effects: 4, EffectWork: 250 * time.Millisecond})
	victim := s.startWorker("kill-a", func(c *workerConfig) { c.KillAt = effectKey(2) })
	s.startWorker("kill-b")
	s.awaitStarted()

	mid := s.awaitSignal(sigMidEffect, victim.owner)
	require.NoError(t, victim.cmd.Process.Kill())
	select {
	case <-victim.done:
	case <-time.After(patience):
		t.Fatal("the killed worker was not reaped")
	}
	require.True(t, victim.killed(), "%s ended by %v, not SIGKILL", victim.owner, victim.err)
	ws := victim.cmd.ProcessState.Sys().(syscall.WaitStatus)
	require.Equal(t, syscall.SIGKILL, ws.Signal())
	held := s.heldBy(victim.owner)
	require.Equal(t, mid.Fence, held[mid.Run], "the killed worker held run %d under fence %d", mid.Run, mid.Fence)
	s.awaitReclaimed(victim.owner, held)
	t.Logf("killed %s mid-effect %s (fence %d), holding runs %v (run → fence)", victim.owner, mid.Key, mid.Fence, held)

	s.awaitFinal()
	s.stopWorkers()
	f := s.check(checkOptions{})
	require.Equal(t, f.runs, f.completed, "every run completed")
	require.Equal(t, 1, s.obs.wit.Accepted()[mid.Key], "the interrupted effect %s happened once", mid.Key)
	require.Positive(t, f.reports[mid.Key], "the interrupted effect %s was reported uncertain", mid.Key)
}
