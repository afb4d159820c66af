package faulttest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPartitionedWorker (SPEC §2, §5): of three worker processes, one is
// cut off from Postgres mid-run — its proxy blackholes every byte, the
// others' links stay healthy. The cut worker's drains go unanswered and it
// stops itself (self-stop or gate refusal) before its leases can expire;
// the reclaimer takes its runs back within T_lease + P + S of their last
// renewal and the other workers finish them, reconciling the effects it
// left uncertain. The partition heals once every lease it held was
// reclaimed; the worker rejoins and works on. Every run completes.
func TestPartitionedWorker(t *testing.T) {
	t.Parallel()
	s := newScenario(t, sharedDatabase(t), scenarioConfig{Runs: 30, Effects: 4, EffectWork: 250 * time.Millisecond})
	cut := s.startWorker("part-a", func(c *workerConfig) { c.CutAt = effectKey(1) })
	s.startWorker("part-b")
	s.startWorker("part-c")
	s.awaitStarted()

	// Mid-effect by its own signal: it holds that run when the link goes.
	at := s.awaitSignal(sigCutPoint, cut.owner)
	cut.proxy.SetBlackhole(true)
	began := time.Now()
	s.obs.release(releaseCut(cut.owner))
	held := s.heldBy(cut.owner)
	require.Equal(t, at.Fence, held[at.Run], "%s held run %d under fence %d when it was cut off", cut.owner, at.Run, at.Fence)
	s.awaitReclaimed(cut.owner, held)
	cut.proxy.SetBlackhole(false)
	t.Logf("partition: %s blackholed for %v, holding runs %v (run → fence), all reclaimed meanwhile",
		cut.owner, time.Since(began).Round(time.Millisecond), held)

	s.awaitFinal()
	s.stopWorkers()
	f := s.check(checkOptions{})
	require.Equal(t, f.runs, f.completed, "every run completed")
	_, _, stats := s.obs.snapshot()
	st := stats[cut.owner]
	require.Positive(t, st.SelfStops+st.GateRefuse, "%s's keeper stopped its holders itself: %+v", cut.owner, st)
}
