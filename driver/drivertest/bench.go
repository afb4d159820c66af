package drivertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// The benchmarks every driver runs, one implementation each: a driver's
// BenchmarkX is one line that passes its BenchOpener, so the figures of
// docs/BENCHMARKS.md compare the stores on exactly the same work.

// BenchOpener opens a fresh, migrated store for one benchmark (the store's
// real clock for Postgres, as production runs it).
type BenchOpener func(b *testing.B) driver.Driver

// benchResult is a typical small completion result; benchPayload a typical
// small run payload.
var (
	benchResult  = []byte(`{"status":"sent","id":"msg-8c1f"}`)
	benchPayload = []byte(`{"to":"user-4411","template":"welcome"}`)
)

// claimForBench enqueues and claims runs.MaxClaimBatch runs with the
// timer stopped, so a completion benchmark measures completions alone.
func claimForBench(b *testing.B, ctx context.Context, d driver.Driver) []*driver.Run {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	return enqueueAndClaim(b, ctx, d, runs.MaxClaimBatch)
}

func enqueueAndClaim(b *testing.B, ctx context.Context, d driver.Driver, n int) []*driver.Run {
	es := make([]runs.Enqueue, n)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "q"}
	}
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
	require.NoError(b, err)
	held, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "bench", Limit: n, Lease: runs.MaxLease})
	require.NoError(b, err)
	require.Len(b, held, n)
	return held
}

// BenchRunComplete is one runner completing claimed runs one call each
// (one transaction and one commit per run). It reports runs per second.
func BenchRunComplete(b *testing.B, open BenchOpener) {
	d, ctx := open(b), context.Background()
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

// BenchRunCompleteMany is a batch completer's flush: 1000 claimed runs
// completed in one call (one commit). It reports runs per second, to set
// beside BenchRunComplete's.
func BenchRunCompleteMany(b *testing.B, open BenchOpener) {
	d, ctx := open(b), context.Background()
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

// BenchRunEnqueue is a producer enqueueing batches of runs without a
// unique key (the common case): one call, one transaction and one commit
// per batch. It reports runs per second.
func BenchRunEnqueue(b *testing.B, open BenchOpener) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			d, ctx := open(b), context.Background()
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

// BenchRunEventAppend is one group committer appending batches of events
// spread over a number of running runs: each batch is one transaction, one
// commit. It reports events per second.
func BenchRunEventAppend(b *testing.B, open BenchOpener) {
	for _, c := range []struct{ batch, runs int }{{100, 10}, {1000, 10}, {1000, 100}, {1000, 1000}, {5000, 500}} {
		b.Run(fmt.Sprintf("batch=%d/runs=%d", c.batch, c.runs), func(b *testing.B) {
			d, ctx := open(b), context.Background()
			held := enqueueAndClaim(b, ctx, d, c.runs)
			seq := make([]int64, len(held))
			p := &driver.RunEventAppendParams{Events: make([]driver.RunEventInsert, c.batch)}
			payload := []byte(`{"step":"charge","amount":1250,"currency":"EUR"}`)
			b.ReportAllocs()
			var cpu0 time.Duration
			for b.Loop() {
				if cpu0 == 0 {
					cpu0 = processCPU() // after the setup, which b.Loop's first call leaves out of the timer too
				}
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
			rows := float64(b.N * c.batch)
			b.ReportMetric(rows/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/rows, "cpu-µs/event")
		})
	}
}

// BenchJournalAppend is one appender making sequential single-entry
// appends, each its own transaction and commit. It logs the durability
// settings it ran with.
func BenchJournalAppend(b *testing.B, open BenchOpener) {
	d, ctx := open(b), context.Background()
	s, err := d.Settings(ctx)
	require.NoError(b, err)
	b.Logf("%s settings: %v", d.Name(), s.Values)
	_, err = d.WorldCreate(ctx, &driver.WorldCreateParams{World: "bench", Home: "home", Term: 24 * time.Hour})
	require.NoError(b, err)
	req := journal.AppendRequest{Holder: "home", Epoch: 1, SeenPosition: 1, Kind: "bench", Payload: []byte(`{"n":1}`)}
	p := &driver.JournalAppendParams{World: "bench", Requests: make([]journal.AppendRequest, 1)}
	b.ReportAllocs()
	var cpu0 time.Duration
	for b.Loop() {
		if cpu0 == 0 {
			cpu0 = processCPU() // after the setup, which b.Loop's first call leaves out of the timer too
		}
		p.Requests[0] = req
		out, err := d.JournalAppend(ctx, p)
		if err != nil || out[0].Err != nil {
			b.Fatal(err, out)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
}
