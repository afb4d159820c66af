package scheduler

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestHandlerContextsEndThroughTheKeeper: a handler's context has no
// cancellable parent shared by every run (registering each run's context
// with one cost a map insert and delete under its lock a run); Stop's
// second stage ends the handlers through the keeper instead
// (cancelHandlers): a handler running then sees its context end, with
// cause context.Canceled, and a run whose work starts after it starts
// cancelled.
func TestHandlerContextsEndThroughTheKeeper(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := openSQLite(t)
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}, {Queue: "q"}}})
	require.NoError(t, err)
	quiet := slog.New(slog.DiscardHandler)
	events := NewEventCommitter(d, EventCommitterConfig{Logger: quiet})
	require.NoError(t, events.Start(ctx))
	defer events.Stop(ctx)
	w, err := NewWorker(d, events, WorkerConfig{Queues: map[string]int{"q": 2}, ClockCheck: -1, Manual: true, Logger: quiet})
	require.NoError(t, err)
	held := make(chan struct{})
	var seen []error
	w.Handle("q", func(ctx context.Context, r *Run) error {
		if r.ID == 1 {
			require.NotNil(t, ctx.Done(), "a cancellable context")
			require.NoError(t, ctx.Err())
			close(held)
			<-ctx.Done() // cancelHandlers ends it
		}
		seen = append(seen, context.Cause(ctx))
		return ctx.Err()
	})
	require.NoError(t, w.Start(ctx))
	first := make(chan error, 1)
	go func() { _, err := w.WorkOne(ctx, "q"); first <- err }()
	<-held
	require.NoError(t, context.Cause(w.hctx), "the parent is never cancelled")
	w.cancelHandlers()
	require.NoError(t, <-first)
	_, err = w.WorkOne(ctx, "q") // starts after: cancelled as it starts
	require.NoError(t, err)
	require.Equal(t, []error{context.Canceled, context.Canceled}, seen)
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, w.Stop(sctx))
}
