package bench

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/runs"
)

// RunsConfig shapes a runs benchmark.
type RunsConfig struct {
	Runs        int // runs worked in the measurement
	Workers     int // Worker instances
	Concurrency int // handlers per worker
	Queue       string
}

// RunsResult is one measured shape.
type RunsResult struct {
	Shape   string
	Runs    int
	Elapsed time.Duration
}

// PerSecond is the completed-run rate.
func (r RunsResult) PerSecond() float64 { return float64(r.Runs) / r.Elapsed.Seconds() }

func enqueueN(ctx context.Context, store scheduler.Store, queue string, n int) error {
	for i := 0; i < n; i += 1000 {
		batch := make([]runs.Enqueue, min(1000, n-i))
		for j := range batch {
			batch[j] = runs.Enqueue{Queue: queue, Payload: []byte(strconv.Itoa(i + j))}
		}
		if _, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: batch}); err != nil {
			return err
		}
	}
	return nil
}

// work starts cfg.Workers workers with a no-op handler and returns when
// cfg.Runs runs were completed (all completions flushed by Stop).
func work(ctx context.Context, store scheduler.Store, cfg RunsConfig, started chan<- struct{}) error {
	quiet := slog.New(slog.DiscardHandler)
	events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
	if err := events.Start(ctx); err != nil {
		return err
	}
	defer events.Stop(context.WithoutCancel(ctx))
	var handled atomic.Int64
	done := make(chan struct{})
	var workers []*scheduler.Worker
	for i := range cfg.Workers {
		w, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Owner: fmt.Sprintf("bench-%d", i),
			Queues: map[string]int{cfg.Queue: cfg.Concurrency}, Logger: quiet, FetchInterval: 5 * time.Millisecond})
		if err != nil {
			return err
		}
		w.Handle(cfg.Queue, func(context.Context, *scheduler.Run) error {
			if handled.Add(1) == int64(cfg.Runs) {
				close(done)
			}
			return nil
		})
		if err := w.Start(ctx); err != nil {
			return err
		}
		workers = append(workers, w)
	}
	if started != nil {
		close(started)
	}
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, w := range workers {
		if err := w.Stop(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Drain pre-fills cfg.Runs runs, then times workers working the queue empty.
func Drain(ctx context.Context, store scheduler.Store, cfg RunsConfig) (RunsResult, error) {
	cfg.Queue = "drain"
	if err := enqueueN(ctx, store, cfg.Queue, cfg.Runs); err != nil {
		return RunsResult{}, err
	}
	start := time.Now()
	if err := work(ctx, store, cfg, nil); err != nil {
		return RunsResult{}, err
	}
	return RunsResult{Shape: "drain", Runs: cfg.Runs, Elapsed: time.Since(start)}, nil
}

// Mixed enqueues cfg.Runs runs in batches of 100 while the workers work
// them, and times the whole.
func Mixed(ctx context.Context, store scheduler.Store, cfg RunsConfig) (RunsResult, error) {
	cfg.Queue = "mixed"
	start := time.Now()
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		<-started
		for i := 0; i < cfg.Runs; i += 100 {
			batch := make([]runs.Enqueue, min(100, cfg.Runs-i))
			for j := range batch {
				batch[j] = runs.Enqueue{Queue: cfg.Queue}
			}
			if _, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: batch}); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	if err := work(ctx, store, cfg, started); err != nil {
		return RunsResult{}, err
	}
	if err := <-errc; err != nil {
		return RunsResult{}, err
	}
	return RunsResult{Shape: "mixed", Runs: cfg.Runs, Elapsed: time.Since(start)}, nil
}

// EventsResult compares group-committed events with one INSERT per event.
type EventsResult struct {
	Batched, Single float64 // rows/s
	BatchSize       int
	// BatchedCPU and SingleCPU are this process's CPU time per row (for
	// SQLite, in process, the store's work included): less bent by a
	// loaded machine than the rates.
	BatchedCPU, SingleCPU time.Duration
}

// Events measures RunEventAppend of batchSize rows per statement against one
// row per statement, for d each, on runs held by this process.
func Events(ctx context.Context, store scheduler.Store, batchSize int, d time.Duration) (EventsResult, error) {
	if err := enqueueN(ctx, store, "events", 100); err != nil {
		return EventsResult{}, err
	}
	held, err := store.RunClaim(ctx, &driver.RunClaimParams{Queue: "events", Owner: "bench", Limit: 100, Lease: time.Hour})
	if err != nil {
		return EventsResult{}, err
	}
	seq := map[int64]int64{}
	next := func(n int) []driver.RunEventInsert {
		out := make([]driver.RunEventInsert, n)
		for i := range out {
			r := held[i%len(held)]
			seq[r.ID]++
			out[i] = driver.RunEventInsert{RunID: r.ID, Fence: r.Fence, Seq: seq[r.ID], Kind: "bench", Payload: []byte(`{"n":1}`)}
		}
		return out
	}
	rate := func(n int) (float64, time.Duration, error) {
		rows := 0
		cpu0 := ProcessCPU()
		start := time.Now()
		for time.Since(start) < d {
			if _, err := store.RunEventAppend(ctx, &driver.RunEventAppendParams{Events: next(n)}); err != nil {
				return 0, 0, err
			}
			rows += n
		}
		return float64(rows) / time.Since(start).Seconds(), (ProcessCPU() - cpu0) / time.Duration(max(rows, 1)), nil
	}
	var res EventsResult
	res.BatchSize = batchSize
	if res.Single, res.SingleCPU, err = rate(1); err != nil {
		return res, err
	}
	if res.Batched, res.BatchedCPU, err = rate(batchSize); err != nil {
		return res, err
	}
	return res, nil
}
