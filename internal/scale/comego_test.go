package scale

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProcessesComeAndGo (SPEC §6 storage, issue 15): Leasehold processes
// over one Postgres share the queue, the reclaims and the event fan-out
// with no process special, while processes are added, stopped with
// SIGTERM and killed with SIGKILL under load. A killed process's runs are
// reclaimed by any other's reclaimer and completed elsewhere. The end
// check (check) counts runs, effects, events and acknowledged appends and
// finds no invariant broken.
func TestProcessesComeAndGo(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 2, 3, 1)
	f.enqueue(150)
	p1 := f.start("p1")
	p2 := f.start("p2")
	f.awaitCompleted(20)
	f.start("p3")
	f.stop(p1, true) // SIGTERM: graceful
	f.awaitCompleted(50)
	f.kill(p2) // SIGKILL mid-load: its leases are reclaimed
	p4 := f.start("p4")
	f.awaitCompleted(90)
	f.kill(f.procs["p3"])
	f.start("p5")
	f.awaitFinal()
	f.stop(p4, false)
	f.stop(f.procs["p5"], true)
	n := f.check()
	t.Logf("5 processes came and went (1 SIGTERM, 2 SIGKILL, 2 stopped at the end): %s", n)
	require.Positive(t, n.appends)
	require.Positive(t, n.events)
}
