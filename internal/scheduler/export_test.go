package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
)

// CompleteBatchForTest hands cs to a fresh completer as one batch — queued
// before its loop starts, without the completer's own check of each
// completion, as if a row the store refuses had reached the batch — and
// returns each completion's outcome and the number of flushes made.
func CompleteBatchForTest(ctx context.Context, store Store, cs []driver.RunCompletion) ([]error, int64) {
	c := newCompleter(store, clock.Real(), rt.Real(nil), 10*time.Second, slog.New(slog.DiscardHandler))
	items := make([]completion, len(cs))
	for i, rc := range cs {
		items[i] = completion{c: rc, out: &outcome{done: c.rt.NewEvent()}}
		if err := c.b.Add(ctx, items[i]); err != nil {
			panic(err)
		}
	}
	if err := c.b.Start(context.WithoutCancel(ctx)); err != nil {
		panic(err)
	}
	errs := make([]error, len(cs))
	for i, it := range items {
		c.rt.Wait(context.Background(), it.out.done, -1)
		errs[i] = it.out.err
	}
	_ = c.b.Stop(ctx)
	flushes, _ := c.b.Stats()
	return errs, flushes
}

// CompleteEachForTest completes each of cs through complete — the path a
// handler that returned nil takes — on a completer of its own with the
// given runtime and clock and a limit of 10s, all at once from one
// goroutine each, and returns each completion's error.
func CompleteEachForTest(ctx context.Context, store Store, c clock.Clock, r rt.Runtime, cs []driver.RunCompletion) []error {
	cp := newCompleter(store, c, r, 10*time.Second, slog.New(slog.DiscardHandler))
	if err := cp.b.Start(context.WithoutCancel(ctx)); err != nil {
		panic(err)
	}
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, rc := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = cp.complete(10*time.Second, rc, &outcome{})
		}()
	}
	wg.Wait()
	_ = cp.b.Stop(ctx)
	return errs
}
