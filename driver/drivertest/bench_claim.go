package drivertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// BenchRunClaim is the claim statement alone: one run claimed per call
// (what a worker sends when one slot frees) from a queue with 100 runs
// running, in three shapes — no registry row (the default), a global
// concurrency limit that does not bind, and a rate limit that does not
// bind — so the cost of the limited path (the row lock, the counts, the
// start recorded) reads beside the plain one. The claimed run is
// completed with the timer stopped, so the running count stays at 100.
func BenchRunClaim(b *testing.B, open BenchOpener) {
	for _, shape := range []struct {
		name   string
		limits *driver.QueueSetLimitsParams
	}{
		{"plain", nil},
		{"max-running", &driver.QueueSetLimitsParams{Queue: "q", MaxRunning: driver.MaxQueueRunning}},
		{"rate", &driver.QueueSetLimitsParams{Queue: "q", RateLimit: driver.MaxQueueRate, RatePeriod: time.Second}},
	} {
		b.Run(shape.name, func(b *testing.B) {
			d, ctx := open(b), context.Background()
			if shape.limits != nil {
				_, err := d.QueueSetLimits(ctx, shape.limits)
				require.NoError(b, err)
			}
			enqueueAndClaim(b, ctx, d, 100) // 100 running
			avail := 0
			b.ReportAllocs()
			for b.Loop() {
				if avail == 0 {
					b.StopTimer()
					es := make([]runs.Enqueue, runs.MaxClaimBatch)
					for i := range es {
						es[i] = runs.Enqueue{Queue: "q", Payload: benchPayload}
					}
					_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
					require.NoError(b, err)
					avail = len(es)
					b.StartTimer()
				}
				got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "bench", Limit: 1, Lease: time.Minute})
				if err != nil || len(got) != 1 {
					b.Fatalf("claim: %d runs, %v", len(got), err)
				}
				avail--
				b.StopTimer()
				if _, err := d.RunComplete(ctx, &driver.RunCompleteParams{ID: got[0].ID, Fence: got[0].Fence}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "claims/s")
		})
	}
}
