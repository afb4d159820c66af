package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// BenchmarkRunEventAppend is one group committer appending batches of
// events spread over a number of running runs, on the store's real clock
// and the default pools: each batch is one statement, one commit. It
// reports events per second.
func BenchmarkRunEventAppend(b *testing.B) {
	for _, c := range []struct{ batch, runs int }{{100, 10}, {1000, 100}, {1000, 1000}, {5000, 500}} {
		b.Run(fmt.Sprintf("batch=%d/runs=%d", c.batch, c.runs), func(b *testing.B) {
			d := open(b, Config{})
			ctx := context.Background()
			es := make([]runs.Enqueue, c.runs)
			for i := range es {
				es[i] = runs.Enqueue{Queue: "q"}
			}
			_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
			require.NoError(b, err)
			held, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "bench", Limit: c.runs, Lease: runs.MaxLease})
			require.NoError(b, err)
			seq := make([]int64, len(held))
			p := &driver.RunEventAppendParams{Events: make([]driver.RunEventInsert, c.batch)}
			payload := []byte(`{"step":"charge","amount":1250,"currency":"EUR"}`)
			b.ReportAllocs()
			for b.Loop() {
				for i := range p.Events {
					k := i % len(held)
					seq[k]++
					p.Events[i] = driver.RunEventInsert{RunID: held[k].ID, Fence: held[k].Fence, Seq: seq[k], Kind: "step", Payload: payload}
				}
				res, err := d.RunEventAppend(ctx, p)
				if err != nil || len(res.Fenced) > 0 {
					b.Fatal(err, res)
				}
			}
			b.ReportMetric(float64(b.N*c.batch)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
