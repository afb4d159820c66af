package scheduler

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/startstop"
)

// TestWorkerPartsShareTheLifecycle: the worker's completer and keeper are
// started by the worker's Start and stopped by its Stop, through the one
// lifecycle, and the event committer beside it likewise.
func TestWorkerPartsShareTheLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := openSQLite(t)
	quiet := slog.New(slog.DiscardHandler)
	events := NewEventCommitter(d, EventCommitterConfig{Logger: quiet})
	require.NoError(t, events.Start(ctx))
	w, err := NewWorker(d, events, WorkerConfig{Queues: map[string]int{"q": 1}, ClockCheck: -1, Logger: quiet})
	require.NoError(t, err)
	w.Handle("q", func(context.Context, *Run) error { return nil })
	parts := map[string]startstop.Service{"worker": w, "completer": w.completer.b, "keeper": w.keeper, "event committer": events}
	require.NoError(t, w.Start(ctx))
	for name, s := range parts {
		select {
		case <-s.Started():
		default:
			t.Fatalf("%s not started", name)
		}
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, w.Stop(sctx))
	require.NoError(t, events.Stop(sctx))
	for name, s := range parts {
		select {
		case <-s.Stopped():
		default:
			t.Fatalf("%s not stopped", name)
		}
	}
}
