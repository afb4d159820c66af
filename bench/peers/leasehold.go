package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// leaseholdSystem measures Leasehold through its public API (the root
// package and a driver), as a user would. The shape
// logic is copied from internal/bench/runs.go (not importable from another
// module) and must stay in step with it, so these figures match
// `leasehold bench runs`: one Worker, FetchInterval 5ms, the store opened
// as that command opens it.
type leaseholdSystem struct{}

func (leaseholdSystem) Name() string { return "leasehold" }

func (leaseholdSystem) CompletedQuery() string {
	return "SELECT count(*) FROM runs WHERE state = 'completed'"
}

func (leaseholdSystem) Measure(ctx context.Context, _ config, set setting, t target, shape string, n int) (measurement, error) {
	quiet := slog.New(slog.DiscardHandler)
	var d leasehold.Driver
	var err error
	switch t.Store {
	case storePostgres:
		d, err = postgres.Open(ctx, postgres.Config{URL: t.url(), Schema: t.Schema, GeneralConns: 16, Logger: quiet})
	default:
		d, err = sqlite.Open(ctx, sqlite.Config{Path: t.SQLitePath, Logger: quiet})
	}
	if err != nil {
		return measurement{}, fmt.Errorf("opening: %w", err)
	}
	store, err := leasehold.NewClient(ctx, d, leasehold.Config{Logger: quiet}) // migrates
	if err != nil {
		return measurement{}, fmt.Errorf("opening the client: %w", err)
	}
	defer store.Close()
	s, err := store.Settings(ctx)
	if err != nil {
		return measurement{}, fmt.Errorf("reading settings: %w", err)
	}
	m := measurement{Runs: n, Settings: s.Values}
	switch shape {
	case shapeDrain:
		m.timing, err = leaseholdDrain(ctx, store, t.meter(), set, n)
	case shapeMixed:
		m.timing, err = leaseholdMixed(ctx, store, t.meter(), set, n)
	default:
		err = fmt.Errorf("unknown shape %q", shape)
	}
	return m, err
}

// leaseholdDrain pre-fills n runs, then times one worker working the queue
// empty, up to its Stop (which flushes the completions).
func leaseholdDrain(ctx context.Context, store *leasehold.Client, meter *cpuMeter, set setting, n int) (timing, error) {
	const queue = "drain"
	for i := 0; i < n; i += 1000 {
		batch := make([]leasehold.Enqueue, min(1000, n-i))
		for j := range batch {
			batch[j] = leasehold.Enqueue{Queue: queue, Payload: []byte(strconv.Itoa(i + j))}
		}
		if _, err := store.Enqueue(ctx, batch...); err != nil {
			return timing{}, fmt.Errorf("enqueueing: %w", err)
		}
	}
	return leaseholdWork(ctx, store, meter, queue, set, n, nil)
}

// leaseholdMixed enqueues n runs in batches of 100 while the worker works
// them, and times the whole from the worker's start.
func leaseholdMixed(ctx context.Context, store *leasehold.Client, meter *cpuMeter, set setting, n int) (timing, error) {
	const queue = "mixed"
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		select {
		case <-started:
		case <-ctx.Done():
			errc <- ctx.Err()
			return
		}
		for i := 0; i < n; i += 100 {
			batch := make([]leasehold.Enqueue, min(100, n-i))
			for j := range batch {
				batch[j] = leasehold.Enqueue{Queue: queue}
			}
			if _, err := store.Enqueue(ctx, batch...); err != nil {
				errc <- fmt.Errorf("enqueueing: %w", err)
				return
			}
		}
		errc <- nil
	}()
	t, err := leaseholdWork(ctx, store, meter, queue, set, n, started)
	if err != nil {
		return timing{}, err
	}
	if err := <-errc; err != nil { // the enqueuer finished before the n-th run was handled
		return timing{}, err
	}
	return t, nil
}

// leaseholdWork starts one worker of set.Workers handlers (no-op) and
// set.FetchCooldown and returns once n runs were handled and the worker has
// stopped (its completions flushed), with its timing (see timing).
func leaseholdWork(ctx context.Context, store *leasehold.Client, meter *cpuMeter, queue string, set setting, n int, started chan<- struct{}) (timing, error) {
	quiet := slog.New(slog.DiscardHandler)
	var handled atomic.Int64
	done := make(chan struct{})
	w, err := store.NewWorker(leasehold.WorkerConfig{Owner: "bench-0",
		Queues: map[string]int{queue: set.Workers}, Logger: quiet, FetchInterval: 5 * time.Millisecond, FetchCooldown: set.FetchCooldown})
	if err != nil {
		return timing{}, err
	}
	w.Handle(queue, func(context.Context, *leasehold.RunHandle) error {
		if handled.Add(1) == int64(n) {
			close(done)
		}
		return nil
	})
	called := time.Now()
	if err := w.Start(ctx); err != nil {
		return timing{}, err
	}
	begun := time.Now()
	meter.begin(ctx)
	if started != nil {
		close(started)
	}
	select {
	case <-done:
	case <-ctx.Done():
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = w.Stop(stopCtx)
		return timing{}, fmt.Errorf("%d of %d runs handled: %w", handled.Load(), n, ctx.Err())
	}
	stopping := time.Now()
	err = w.Stop(ctx)
	end := time.Now()
	cpuClient, cpuServer, cpuServerOK := meter.end(ctx)
	return measured(called, begun, stopping, end, cpuClient, cpuServer, cpuServerOK), err
}
