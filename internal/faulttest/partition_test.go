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
	cut := s.startWorker("part-a")
	s.startWorker("part-b")
	s.startWorker("part-c")
	s.awaitStarted()
	s.awaitAcks(cut.owner, 2) // mid-run

	cut.proxy.SetBlackhole(true)
	began := time.Now()
	held := s.heldBy(cut.owner)
	require.NotEmpty(t, held, "%s held runs when it was cut off", cut.owner)
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
