package startstop_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/internal/startstop"
)

// loopService is the smallest service: one loop that runs until stopped.
type loopService struct {
	startstop.Lifecycle
	startErr error
	release  chan struct{} // the loop returns only once this is closed (nil: at once)
	starts   int
}

func (s *loopService) Start(ctx context.Context) error {
	return s.Lifecycle.Start(ctx, func(ctx context.Context) error {
		s.starts++
		if s.startErr != nil {
			return s.startErr
		}
		s.Go("loop", func() {
			<-ctx.Done()
			if s.release != nil {
				<-s.release
			}
		})
		return nil
	})
}

func (s *loopService) Stop(ctx context.Context) error { return s.Lifecycle.Stop(ctx, nil) }

var _ startstop.Service = (*loopService)(nil)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestStartStopSignals(t *testing.T) {
	t.Parallel()
	s := &loopService{}
	require.False(t, closed(s.Started()))
	require.NoError(t, s.Start(t.Context()))
	require.True(t, closed(s.Started()))
	require.False(t, closed(s.Stopped()))
	require.NoError(t, s.Stop(t.Context()))
	require.True(t, closed(s.Stopped()))
}

func TestStartIsIdempotent(t *testing.T) {
	t.Parallel()
	s := &loopService{}
	require.NoError(t, s.Start(t.Context()))
	require.NoError(t, s.Start(t.Context()))
	require.Equal(t, 1, s.starts)
	require.NoError(t, s.Stop(t.Context()))
	require.NoError(t, s.Stop(t.Context()), "a second Stop is a no-op")
}

func TestStartAfterStopFails(t *testing.T) {
	t.Parallel()
	s := &loopService{}
	require.NoError(t, s.Start(t.Context()))
	require.NoError(t, s.Stop(t.Context()))
	require.ErrorIs(t, s.Start(t.Context()), startstop.ErrStopped)
}

func TestStopNeverStarted(t *testing.T) {
	t.Parallel()
	s := &loopService{}
	require.NoError(t, s.Stop(t.Context()))
	require.True(t, closed(s.Stopped()))
	require.False(t, closed(s.Started()))
	require.ErrorIs(t, s.Start(t.Context()), startstop.ErrStopped)
}

func TestStartErrorLeavesIdle(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	s := &loopService{startErr: boom}
	require.ErrorIs(t, s.Start(t.Context()), boom)
	require.False(t, closed(s.Started()))
	s.startErr = nil
	require.NoError(t, s.Start(t.Context()), "a failed start may be retried")
	require.NoError(t, s.Stop(t.Context()))
}

func TestStopBoundedByContext(t *testing.T) {
	t.Parallel()
	s := &loopService{release: make(chan struct{})}
	require.NoError(t, s.Start(t.Context()))
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // a deadline already past: Stop must not wait for the stuck loop
	err := s.Stop(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, closed(s.Stopped()), "the loop has not returned yet")
	close(s.release)
	<-s.Stopped()
	require.NoError(t, s.Stop(t.Context()), "stopped now")
}

func TestStartContextEndsTheService(t *testing.T) {
	t.Parallel()
	s := &loopService{}
	ctx, cancel := context.WithCancel(t.Context())
	require.NoError(t, s.Start(ctx))
	cancel()
	require.NoError(t, s.Stop(t.Context()))
	require.True(t, closed(s.Stopped()))
}

func TestStopRunsDrainBeforeCancel(t *testing.T) {
	t.Parallel()
	var l startstop.Lifecycle
	var runCtx context.Context
	require.NoError(t, l.Start(t.Context(), func(ctx context.Context) error {
		runCtx = ctx
		l.Go("loop", func() { <-ctx.Done() })
		return nil
	}))
	drained := false
	require.NoError(t, l.Stop(t.Context(), func(ctx context.Context) error {
		require.NoError(t, runCtx.Err(), "the drain runs while the service still runs")
		drained = true
		return nil
	}))
	require.True(t, drained)
	require.Error(t, runCtx.Err())
}

func TestStopContextBoundsTheLastFlush(t *testing.T) {
	t.Parallel()
	var l startstop.Lifecycle
	got := make(chan time.Time, 1)
	require.NoError(t, l.Start(t.Context(), func(ctx context.Context) error {
		l.Go("flusher", func() {
			<-ctx.Done()
			d, _ := l.StopContext().Deadline()
			got <- d
		})
		return nil
	}))
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	defer cancel()
	require.NoError(t, l.Stop(ctx, nil))
	require.Equal(t, deadline, <-got)

	var unstopped startstop.Lifecycle
	require.Error(t, unstopped.StopContext().Err(), "before Stop the last flush gets no time")
}

func TestConcurrentStartStop(t *testing.T) {
	t.Parallel()
	for range 50 {
		s := &loopService{}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(2)
			go func() { defer wg.Done(); _ = s.Start(t.Context()) }()
			go func() { defer wg.Done(); require.NoError(t, s.Stop(t.Context())) }()
		}
		wg.Wait()
		require.NoError(t, s.Stop(t.Context()))
		<-s.Stopped()
		require.ErrorIs(t, s.Start(t.Context()), startstop.ErrStopped)
	}
}
