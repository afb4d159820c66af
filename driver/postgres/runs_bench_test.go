package postgres

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// benchResult is a typical small completion result.
var benchResult = []byte(`{"status":"sent","id":"msg-8c1f"}`)

// claimForBench enqueues and claims runs.MaxClaimBatch runs with the
// timer stopped, so a completion benchmark measures completions alone.
func claimForBench(b *testing.B, ctx context.Context, d *Driver) []*driver.Run {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	es := make([]runs.Enqueue, runs.MaxClaimBatch)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "q"}
	}
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
	require.NoError(b, err)
	held, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "bench", Limit: len(es), Lease: runs.MaxLease})
	require.NoError(b, err)
	require.Len(b, held, len(es))
	return held
}

// BenchmarkRunComplete is one runner completing claimed runs one call
// each (one statement, one commit per run), on the store's real clock and
// the default pools. It reports runs per second.
func BenchmarkRunComplete(b *testing.B) {
	d := open(b, Config{})
	ctx := context.Background()
	var held []*driver.Run
	b.ReportAllocs()
	for b.Loop() {
		if len(held) == 0 {
			held = claimForBench(b, ctx, d)
		}
		r := held[0]
		held = held[1:]
		if _, err := d.RunComplete(ctx, &driver.RunCompleteParams{ID: r.ID, Fence: r.Fence, Result: benchResult}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
}

// BenchmarkRunCompleteMany is a batch completer's flush: 1000 claimed runs
// completed in one call (one statement, one commit). It reports runs per
// second, to set beside BenchmarkRunComplete's.
func BenchmarkRunCompleteMany(b *testing.B) {
	d := open(b, Config{})
	ctx := context.Background()
	p := &driver.RunCompleteManyParams{Runs: make([]driver.RunCompletion, runs.MaxClaimBatch)}
	b.ReportAllocs()
	for b.Loop() {
		for i, r := range claimForBench(b, ctx, d) {
			p.Runs[i] = driver.RunCompletion{ID: r.ID, Fence: r.Fence, Result: benchResult}
		}
		res, err := d.RunCompleteMany(ctx, p)
		if err != nil || len(res.Completed) != len(p.Runs) {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(float64(b.N*len(p.Runs))/b.Elapsed().Seconds(), "runs/s")
}
