package faulttest

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLatencyStorm (SPEC §2, §5): three worker processes work 36 runs
// while every worker's link to Postgres suffers a storm, each on its own
// proxy: 1s each way (2s per round trip) with up to 0.5s of jitter, and
// once per lease term a 20s stall of all its traffic at a random point of
// the term — for two lease terms, every figure divided by scale. The
// write-behind keeper keeps the leases through it; where a stall leaves an
// effect too little runway the gate refuses it and the attempt is retried.
// Afterwards every run is completed and the shared checks hold.
func TestLatencyStorm(t *testing.T) {
	t.Parallel()
	s := newScenario(t, sharedDatabase(t), scenarioConfig{Runs: 36, Effects: 4, EffectWork: 250 * time.Millisecond})
	for _, owner := range []string{"storm-a", "storm-b", "storm-c"} {
		s.startWorker(owner)
	}
	s.awaitStarted()
	s.awaitAcks("", 3) // mid-run

	const terms = 2
	latency, jitter, stall := scaled(time.Second), scaled(500*time.Millisecond), scaled(20*time.Second)
	ackedBefore := s.obs.ackCount("")
	began := time.Now()
	var wg sync.WaitGroup
	for _, p := range s.workers {
		p.proxy.SetLatency(latency, jitter)
		// The storm's schedule is wall time by nature: these sleeps are
		// the fault, not waits for a condition.
		wg.Go(func() {
			for range terms {
				at := rand.N(timing.Lease - stall)
				time.Sleep(at)
				p.proxy.Stall(stall)
				time.Sleep(timing.Lease - at)
			}
			p.proxy.SetLatency(0, 0)
		})
	}
	wg.Wait()
	during := s.obs.ackCount("") - ackedBefore
	t.Logf("storm: %v latency each way (+ up to %v jitter), a %v stall per %v term on each worker's proxy, for %v; %d events acknowledged during it",
		latency, jitter, stall, timing.Lease, time.Since(began).Round(time.Millisecond), during)
	require.Positive(t, during, "the workers made progress through the storm")

	s.awaitFinal()
	s.stopWorkers()
	f := s.check(checkOptions{})
	require.Equal(t, f.runs, f.completed, "every run completed")
}
