package drivertest

import (
	"context"
	"testing"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// BenchRunCycle is the store's side of the mixed shape of bench/peers,
// one call at a time: each op enqueues a batch of 100 runs, claims them
// and completes them in one complete-many — three calls, three
// transactions, three commits. It reports wall and process CPU per run,
// the writer's cost per run with no scheduling between callers in it
// (on SQLite the mixed shape is bound by that one writer).
func BenchRunCycle(b *testing.B, open BenchOpener) {
	const n = 100
	d, ctx := open(b), context.Background()
	ep := &driver.RunEnqueueParams{Runs: make([]runs.Enqueue, n)}
	for i := range ep.Runs {
		ep.Runs[i] = runs.Enqueue{Queue: "q"}
	}
	cp := &driver.RunCompleteManyParams{Runs: make([]driver.RunCompletion, n)}
	var cpu0 = processCPU()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.RunEnqueue(ctx, ep); err != nil {
			b.Fatal(err)
		}
		held, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "bench", Limit: n, Lease: runs.MaxLease})
		if err != nil || len(held) != n {
			b.Fatalf("claim: %d runs, %v", len(held), err)
		}
		for i, r := range held {
			cp.Runs[i] = driver.RunCompletion{ID: r.ID, Fence: r.Fence}
		}
		res, err := d.RunCompleteMany(ctx, cp)
		if err != nil || len(res.Completed) != n {
			b.Fatal(err, res)
		}
	}
	runsDone := float64(b.N * n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/runsDone, "µs/run")
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/runsDone, "cpu-µs/run")
}
