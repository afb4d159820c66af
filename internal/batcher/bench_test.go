package batcher_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/leasehold/leasehold/internal/batcher"
)

// BenchmarkAddAndSettle: the batcher's own cost per item — Add from many
// goroutines, one flush per batch into a no-op store, each item's outcome
// delivered — with the completer's policy (no gather timer) and the event
// committer's (a 2ms linger on the real clock).
func BenchmarkAddAndSettle(b *testing.B) {
	for _, bc := range []struct {
		name    string
		maxWait time.Duration
	}{{"no-timer", 0}, {"linger-2ms", 2 * time.Millisecond}} {
		b.Run(bc.name, func(b *testing.B) {
			var wg sync.WaitGroup
			bt, err := batcher.New(batcher.Config[int]{MaxBatch: 1000, MaxWait: bc.maxWait,
				Flush:  func(context.Context, []int) []error { return nil },
				Done:   func(items []int, _ []error) { wg.Add(-len(items)) },
				Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			if err := bt.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			wg.Add(b.N)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := bt.Add(context.Background(), 1); err != nil {
						b.Error(err)
						return
					}
				}
			})
			wg.Wait()
			b.StopTimer()
			flushes, items := bt.Stats()
			b.ReportMetric(float64(items)/float64(max(flushes, 1)), "items/flush")
			_ = bt.Stop(context.Background())
		})
	}
}
