package leasehold

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/startstop"
)

// TestEveryComponentRunsOnTheOneLifecycle: each background component of a
// client and a worker — sweeper, reclaimer, event committer, appender,
// worker, its keeper (and, inside the worker's stop, its completer) —
// signals Started when started and Stopped when stopped through
// internal/startstop, and refuses a start after its stop.
func TestEveryComponentRunsOnTheOneLifecycle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db")})
	require.NoError(t, err)
	c, err := NewClient(ctx, d, Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	w, err := c.NewWorker(WorkerConfig{Queues: map[string]int{"q": 1}, ClockCheck: -1})
	require.NoError(t, err)
	w.Handle("q", func(context.Context, *RunHandle) error { return nil })
	require.NoError(t, c.StartReclaimer(ctx))
	require.NoError(t, c.StartSweeper(ctx))
	require.NoError(t, w.Start(ctx))

	services := []struct {
		name string
		s    startstop.Service
	}{
		{"sweeper", c.sweeper},
		{"reclaimer", c.reclaimer},
		{"event committer", c.events},
		{"appender", c.appender},
		{"worker", w.w},
		{"keeper", w.w.Keeper()},
	}
	for _, s := range services {
		require.True(t, isClosed(s.s.Started()), "%s: started", s.name)
		require.False(t, isClosed(s.s.Stopped()), "%s: not stopped yet", s.name)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, w.Stop(sctx))
	require.NoError(t, c.Close())
	for _, s := range services {
		require.True(t, isClosed(s.s.Stopped()), "%s: stopped", s.name)
		require.ErrorIs(t, s.s.Start(ctx), ErrClosed, "%s: a stopped service does not restart", s.name)
		require.NoError(t, s.s.Stop(ctx), "%s: Stop is idempotent", s.name)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
