package scale

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestScaleFigures measures runs/s and world commands (journal appends
// acknowledged)/s with 1, 2 and 4 processes over one Postgres: each
// process runs a worker (4 slots; a run is one effect through the witness,
// one event, a Step and the completion), the reclaimer and 2 appenders to
// its own world. The runs are enqueued once every process runs; the clock
// stops when the last is final. Then the same end check as every test.
// It is a measurement, not a gate: skipped unless LEASEHOLD_SCALE_FIGURES=1
// (LEASEHOLD_SCALE_RUNS sets the runs per measurement, default 600).
func TestScaleFigures(t *testing.T) {
	if os.Getenv("LEASEHOLD_SCALE_FIGURES") != "1" {
		t.Skip("a measurement: LEASEHOLD_SCALE_FIGURES=1 go test -count=1 -run TestScaleFigures -v ./internal/scale")
	}
	nRuns := 600
	if v := os.Getenv("LEASEHOLD_SCALE_RUNS"); v != "" {
		_, err := fmt.Sscan(v, &nRuns)
		require.NoError(t, err)
	}
	var base float64
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("processes=%d", n), func(t *testing.T) {
			f := newFleet(t, 1, 4, 2)
			for i := range n {
				f.start(fmt.Sprintf("p%d", i+1))
			}
			_, a0 := f.counts()
			start := time.Now()
			f.enqueue(nRuns)
			f.awaitFinal()
			elapsed := time.Since(start)
			_, a1 := f.counts()
			for _, p := range f.procs {
				f.stop(p, true)
			}
			tl := f.check()
			rps := float64(nRuns) / elapsed.Seconds()
			if n == 1 {
				base = rps
			}
			t.Logf("%d process(es): %d runs in %v = %.0f runs/s (%.2f× one process); %.0f world commands (appends)/s; check: %s",
				n, nRuns, elapsed.Round(time.Millisecond), rps, rps/base, float64(a1-a0)/elapsed.Seconds(), tl)
		})
	}
}
