package batcher_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/batcher"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var errTransient = errors.New("store unreachable")
var errRefused = errors.New("row refused")

type outcome struct {
	item int
	err  error
}

// testBundle is a batcher over a scripted flush: each call is reported on
// calls and answered with what the test sends on answers (nil: all ok).
type testBundle struct {
	clk     *clock.Fake
	b       *batcher.Batcher[int]
	calls   chan []int
	answers chan func(ctx context.Context, items []int) []error
	done    chan outcome
}

func setup(t *testing.T, cfg batcher.Config[int]) *testBundle {
	t.Helper()
	tb := &testBundle{clk: clock.NewFake(epoch), calls: make(chan []int, 100),
		answers: make(chan func(context.Context, []int) []error, 100), done: make(chan outcome, 1000)}
	cfg.Clock = tb.clk
	cfg.Logger = slog.New(slog.DiscardHandler)
	cfg.Flush = func(ctx context.Context, items []int) []error {
		tb.calls <- append([]int(nil), items...)
		answer := <-tb.answers
		if answer == nil {
			return nil
		}
		return answer(ctx, items)
	}
	cfg.Done = func(items []int, errs []error) {
		for i, it := range items {
			var err error
			if errs != nil {
				err = errs[i]
			}
			tb.done <- outcome{it, err}
		}
	}
	b, err := batcher.New(cfg)
	require.NoError(t, err)
	tb.b = b
	t.Cleanup(func() { _ = b.Stop(context.Background()) })
	return tb
}

func (tb *testBundle) ok() { tb.answers <- nil }

func (tb *testBundle) fail(err error) {
	tb.answers <- func(_ context.Context, items []int) []error { return all(len(items), err) }
}

func all(n int, err error) []error {
	errs := make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

func (tb *testBundle) outcomes(t *testing.T, n int) map[int]error {
	t.Helper()
	got := map[int]error{}
	for range n {
		o := <-tb.done
		got[o.item] = o.err
	}
	return got
}

func addAll(t *testing.T, b *batcher.Batcher[int], items ...int) {
	t.Helper()
	for _, it := range items {
		require.NoError(t, b.Add(t.Context(), it))
	}
}

func TestFlushesWhenFlushAtArePending(t *testing.T) {
	t.Parallel()
	tb := setup(t, batcher.Config[int]{FlushAt: 3, MaxWait: time.Hour})
	addAll(t, tb.b, 1, 2, 3)
	require.NoError(t, tb.b.Start(t.Context()))
	require.Equal(t, []int{1, 2, 3}, <-tb.calls, "no time passed: the count alone flushed")
	tb.ok()
	require.Equal(t, map[int]error{1: nil, 2: nil, 3: nil}, tb.outcomes(t, 3))
}

func TestFlushesAfterMaxWait(t *testing.T) {
	t.Parallel()
	tb := setup(t, batcher.Config[int]{FlushAt: 10, MaxWait: 5 * time.Millisecond})
	require.NoError(t, tb.b.Start(t.Context()))
	addAll(t, tb.b, 7)
	tb.clk.BlockUntil(1) // the gather timer is armed
	select {
	case <-tb.calls:
		t.Fatal("flushed before MaxWait")
	default:
	}
	tb.clk.Advance(5 * time.Millisecond)
	require.Equal(t, []int{7}, <-tb.calls)
	tb.ok()
	require.NoError(t, tb.outcomes(t, 1)[7])
}

func TestMaxBatchSplitsAPendingBurst(t *testing.T) {
	t.Parallel()
	tb := setup(t, batcher.Config[int]{MaxBatch: 2})
	addAll(t, tb.b, 1, 2, 3, 4, 5)
	require.NoError(t, tb.b.Start(t.Context()))
	for _, want := range [][]int{{1, 2}, {3, 4}, {5}} {
		require.Equal(t, want, <-tb.calls)
		tb.ok()
	}
	tb.outcomes(t, 5)
	flushes, items := tb.b.Stats()
	require.Equal(t, int64(3), flushes)
	require.Equal(t, int64(5), items)
}

func TestARefusedItemDoesNotTakeItsNeighbours(t *testing.T) {
	t.Parallel()
	tb := setup(t, batcher.Config[int]{Retryable: func(err error) bool { return !errors.Is(err, errRefused) }})
	addAll(t, tb.b, 1, 2, 3)
	require.NoError(t, tb.b.Start(t.Context()))
	require.Equal(t, []int{1, 2, 3}, <-tb.calls)
	tb.answers <- func(_ context.Context, items []int) []error { return []error{nil, errRefused, nil} }
	require.Equal(t, map[int]error{1: nil, 2: errRefused, 3: nil}, tb.outcomes(t, 3))
	require.Empty(t, tb.calls, "a final refusal is not retried")
}

func TestRetriesWithExponentialBackoffOnTheClock(t *testing.T) {
	t.Parallel()
	tb := setup(t, batcher.Config[int]{BackoffMin: time.Millisecond, BackoffMax: 3 * time.Millisecond,
		Retryable: func(err error) bool { return !errors.Is(err, errRefused) }})
	addAll(t, tb.b, 1, 2)
	require.NoError(t, tb.b.Start(t.Context()))
	require.Equal(t, []int{1, 2}, <-tb.calls)
	// Item 1 fails transiently, item 2 is refused: only 1 is retried.
	tb.answers <- func(_ context.Context, items []int) []error { return []error{errTransient, errRefused} }
	require.Equal(t, errRefused, tb.outcomes(t, 1)[2])
	for _, wait := range []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond} {
		tb.clk.BlockUntil(1)
		tb.clk.Advance(wait - time.Nanosecond)
		require.Empty(t, tb.calls, "retried before its backoff of %v", wait)
		tb.clk.Advance(time.Nanosecond)
		require.Equal(t, []int{1}, <-tb.calls)
		tb.fail(errTransient)
	}
	tb.clk.BlockUntil(1)
	addAll(t, tb.b, 3) // a newer item joins the retry, behind it
	tb.clk.Advance(3 * time.Millisecond)
	require.Equal(t, []int{1, 3}, <-tb.calls)
	tb.ok()
	require.Equal(t, map[int]error{1: nil, 3: nil}, tb.outcomes(t, 2))
}

func TestMaxAttemptsFailsTheItem(t *testing.T) {
	t.Parallel()
	tb := setup(t, batcher.Config[int]{MaxAttempts: 2})
	addAll(t, tb.b, 1)
	require.NoError(t, tb.b.Start(t.Context()))
	<-tb.calls
	tb.fail(errTransient)
	tb.clk.BlockUntil(1)
	tb.clk.Advance(time.Millisecond)
	<-tb.calls
	tb.fail(errTransient)
	require.ErrorIs(t, tb.outcomes(t, 1)[1], errTransient)
}

func TestStopFlushesOnceMore(t *testing.T) {
	t.Parallel()
	tb := setup(t, batcher.Config[int]{FlushAt: 100, MaxWait: time.Hour})
	require.NoError(t, tb.b.Start(t.Context()))
	addAll(t, tb.b, 1, 2)
	tb.clk.BlockUntil(1) // gathering, waiting for more
	tb.ok()
	require.NoError(t, tb.b.Stop(t.Context()))
	require.Equal(t, []int{1, 2}, <-tb.calls)
	require.Equal(t, map[int]error{1: nil, 2: nil}, tb.outcomes(t, 2))
	require.ErrorIs(t, tb.b.Add(t.Context(), 3), batcher.ErrStopped)
}

// A flush stuck on a store that never answers (a blackholed connection)
// holds Stop only until Stop's own deadline; the items are then failed
// back with a StoppedError carrying the last store error, never dropped
// in silence and never waited on forever.
func TestStopDuringOutageIsBoundedByItsContext(t *testing.T) {
	t.Parallel()
	tb := setup(t, batcher.Config[int]{})
	blackhole := func(ctx context.Context, items []int) []error {
		<-ctx.Done()
		return all(len(items), errTransient)
	}
	for range 10 {
		tb.answers <- blackhole
	}
	require.NoError(t, tb.b.Start(t.Context()))
	addAll(t, tb.b, 1)
	<-tb.calls // the flush is in flight, stuck
	addAll(t, tb.b, 2)

	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan error, 1)
	go func() { stopped <- tb.b.Stop(ctx) }()
	select {
	case <-tb.b.Stopped():
		t.Fatal("stopped while its context was still live")
	case <-tb.done:
		t.Fatal("an item was settled while its flush was still in flight")
	default:
	}
	cancel() // Stop's deadline
	<-tb.b.Stopped()
	got := tb.outcomes(t, 2)
	for _, it := range []int{1, 2} {
		var se *batcher.StoppedError
		require.ErrorAs(t, got[it], &se)
		require.ErrorIs(t, got[it], batcher.ErrStopped)
		require.ErrorIs(t, got[it], errTransient)
	}
	_ = <-stopped
}

func TestAddBlocksWhileTheBufferIsFull(t *testing.T) {
	t.Parallel()
	tb := setup(t, batcher.Config[int]{MaxBatch: 1, Buffer: 1})
	addAll(t, tb.b, 1)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, tb.b.Add(ctx, 2), context.Canceled, "full: Add waits for room, respecting ctx")

	added := make(chan error, 1)
	go func() { added <- tb.b.Add(t.Context(), 3) }()
	require.NoError(t, tb.b.Start(t.Context()))
	require.Equal(t, []int{1}, <-tb.calls)
	require.NoError(t, <-added, "room made: the blocked Add went in")
	tb.ok()
	require.Equal(t, []int{3}, <-tb.calls)
	tb.ok()
	tb.outcomes(t, 2)
}

func TestStopReleasesABlockedAdd(t *testing.T) {
	t.Parallel()
	tb := setup(t, batcher.Config[int]{MaxBatch: 1, Buffer: 1})
	addAll(t, tb.b, 1)
	added := make(chan error, 1)
	go func() { added <- tb.b.Add(t.Context(), 2) }()
	require.NoError(t, tb.b.Stop(t.Context()), "never started")
	err := <-added
	if err != nil { // it may have gone in just before the stop: then it is failed back below
		require.ErrorIs(t, err, batcher.ErrStopped)
	}
	for _, e := range tb.outcomes(t, len(tb.done)) {
		require.ErrorIs(t, e, batcher.ErrStopped, "never started: the buffer is failed back, not dropped")
	}
}

func TestConfigNeedsFlush(t *testing.T) {
	t.Parallel()
	_, err := batcher.New(batcher.Config[int]{})
	require.Error(t, err)
}
