package faulttest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/pgcluster"
)

// TestPostgresRestart (SPEC §1, §5): two worker processes work 30 runs on
// a throwaway cluster (fsync on) that is stopped with `pg_ctl stop -m
// immediate` mid-run — no checkpoint, every connection dropped — held down
// for 1s (30s / scale) and started again, replaying its WAL. Everything
// acknowledged before the stop survives it: the events Step acknowledged
// are there, the effects committed are not run again. The workers ride the
// outage out (failed drains are retried; a holder whose lag reached D_stop
// stops itself and its run is retried or reclaimed) and every run
// completes. A reclaim's strand, less the part of the outage within it,
// is within T_lease + P + S: no reclaimer can write while the store is
// down.
func TestPostgresRestart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	c := pgcluster.Start(t)
	s := newScenario(t, clusterDatabase(c), scenarioConfig{Runs: 30, Effects: 4, EffectWork: 250 * time.Millisecond})
	s.startWorker("restart-a")
	s.startWorker("restart-b")
	s.awaitStarted()
	s.awaitAcks("", 6) // mid-run

	ackedBefore := s.obs.ackCount("")
	outage := interval{from: time.Now()}
	require.NoError(t, c.Stop(ctx))
	time.Sleep(scaled(30 * time.Second)) // the outage itself: its length is the fault
	require.NoError(t, c.Start(ctx))     // after WAL replay
	outage.to = time.Now()
	t.Logf("postgres stopped (-m immediate) at %s with %d events acknowledged, back at %s, %v later",
		outage.from.Format("15:04:05.000"), ackedBefore, outage.to.Format("15:04:05.000"), outage.to.Sub(outage.from).Round(time.Millisecond))

	s.awaitFinal()
	s.stopWorkers()
	f := s.check(checkOptions{storeDown: []interval{outage}})
	require.Equal(t, f.runs, f.completed, "every run completed")
	require.GreaterOrEqual(t, f.acked, ackedBefore)
}
