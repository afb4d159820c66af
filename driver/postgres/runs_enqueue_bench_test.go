package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// benchPayload is a typical small run payload.
var benchPayload = []byte(`{"to":"user-4411","template":"welcome"}`)

// BenchmarkRunEnqueue is a producer enqueueing batches of runs without a
// unique key (the common case): one call, one transaction and one commit
// per batch, on the store's real clock and the default pools. It reports
// runs per second.
func BenchmarkRunEnqueue(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			d := open(b, Config{})
			ctx := context.Background()
			p := &driver.RunEnqueueParams{Runs: make([]runs.Enqueue, n)}
			for i := range p.Runs {
				p.Runs[i] = runs.Enqueue{Queue: "q", Payload: benchPayload}
			}
			b.ReportAllocs()
			for b.Loop() {
				out, err := d.RunEnqueue(ctx, p)
				if err != nil || len(out) != n {
					b.Fatal(err, len(out))
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
