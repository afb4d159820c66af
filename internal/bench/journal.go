package bench

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
)

// AppendResult is one measured configuration.
type AppendResult struct {
	Appenders int
	Appends   int64
	Elapsed   time.Duration
	Batches   int64
	Latencies []time.Duration // sorted
	// CPU is this process's user+system CPU over the run (the appenders,
	// the group committer and, on SQLite, the store itself).
	CPU time.Duration
}

// CPUPerAppend is the process's CPU per acknowledged append.
func (r AppendResult) CPUPerAppend() time.Duration { return r.CPU / time.Duration(max(r.Appends, 1)) }

// PerSecond is the acknowledged append rate.
func (r AppendResult) PerSecond() float64 { return float64(r.Appends) / r.Elapsed.Seconds() }

// MeanBatch is the mean number of appends per group commit.
func (r AppendResult) MeanBatch() float64 { return float64(r.Appends) / float64(max(r.Batches, 1)) }

// Quantile returns the q-quantile append latency.
func (r AppendResult) Quantile(q float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	return r.Latencies[min(len(r.Latencies)-1, int(q*float64(len(r.Latencies))))]
}

// Mean returns the mean append latency.
func (r AppendResult) Mean() time.Duration {
	var sum time.Duration
	for _, l := range r.Latencies {
		sum += l
	}
	return sum / time.Duration(max(len(r.Latencies), 1))
}

// Appends runs n concurrent appenders, each appending a small entry in a
// loop to one world through the group committer, for d.
func Appends(ctx context.Context, d driver.Driver, worldID string, n int, dur time.Duration) (AppendResult, error) {
	w, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: worldID, Home: "bench", Term: time.Hour})
	if err != nil {
		return AppendResult{}, err
	}
	app := world.NewAppender(d, world.AppenderConfig{})
	var appends atomic.Int64
	var mu sync.Mutex
	var lats []time.Duration
	var firstErr atomic.Pointer[error]
	deadline := time.Now().Add(dur)
	cpu0 := ProcessCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			local := make([]time.Duration, 0, 4096)
			payload := []byte(fmt.Sprintf(`{"appender":%d,"op":"bench"}`, g))
			for time.Now().Before(deadline) {
				t0 := time.Now()
				_, err := app.Append(ctx, worldID, journal.AppendRequest{Holder: "bench", Epoch: w.Epoch,
					SeenPosition: w.GrantedAt, Kind: "bench", Payload: payload})
				if err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				local = append(local, time.Since(t0))
				appends.Add(1)
			}
			mu.Lock()
			lats = append(lats, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := ProcessCPU() - cpu0
	if e := firstErr.Load(); e != nil {
		return AppendResult{}, *e
	}
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	batches, _ := app.Stats()
	return AppendResult{Appenders: n, Appends: appends.Load(), Elapsed: elapsed, Batches: batches, Latencies: lats, CPU: cpu}, nil
}
