package world_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/bench"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
)

// BenchmarkAppend measures durable, group-committed journal appends with 1
// and 16 concurrent appenders on each driver. ns/op is per append across all
// appenders; entries/batch is the mean group-commit batch. For the raw
// fsync rate and the side-by-side ratios, run `leasehold bench journal`.
func BenchmarkAppend(b *testing.B) {
	for _, drv := range []struct {
		name string
		open func(testing.TB) driver.Driver
	}{{"sqlite", openSQLite}, {"postgres", openPostgres}} {
		for _, n := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/appenders=%d", drv.name, n), func(b *testing.B) {
				d := drv.open(b)
				benchAppend(b, d, n)
			})
		}
	}
}

func benchAppend(b *testing.B, d driver.Driver, n int) {
	ctx := context.Background()
	w, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "bench", Home: "h", Term: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	app := world.NewAppender(d, world.AppenderConfig{})
	payload := []byte(`{"op":"bench"}`)
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := bench.ProcessCPU()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if _, err := app.Append(ctx, "bench", journal.AppendRequest{Holder: "h", Epoch: w.Epoch,
					SeenPosition: w.GrantedAt, Kind: "bench", Payload: payload}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	cpu := bench.ProcessCPU() - cpu0
	batches, appends := app.Stats()
	b.ReportMetric(float64(appends)/float64(max(batches, 1)), "entries/batch")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/append")
}
