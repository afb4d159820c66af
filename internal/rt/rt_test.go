package rt_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/rt"
)

var start = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func TestWaitSaysWhatWokeIt(t *testing.T) {
	r := rt.Real(clock.NewFake(start))
	ev := r.NewEvent()
	require.False(t, ev.Fired())
	ev.Fire()
	ev.Fire() // twice is fine
	require.True(t, ev.Fired())
	require.Equal(t, rt.Fired, r.Wait(context.Background(), ev, -1))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.Equal(t, rt.Done, r.Wait(ctx, r.NewEvent(), -1))
	require.Equal(t, rt.Timeout, r.Wait(context.Background(), nil, 0))
}

func TestWaitTimesOutOnTheInjectedClock(t *testing.T) {
	c := clock.NewFake(start)
	r := rt.Real(c)
	done := make(chan rt.Woke)
	go func() { done <- r.Wait(context.Background(), r.NewEvent(), time.Hour) }()
	c.BlockUntil(1) // the wait's timer is armed
	c.Advance(time.Hour)
	require.Equal(t, rt.Timeout, <-done)
}

func TestSignalCoalescesAndIsConsumed(t *testing.T) {
	s := &rt.Signal{RT: rt.Real(clock.NewFake(start))}
	s.Notify()
	s.Notify() // absorbed by the mark already there
	require.Equal(t, rt.Fired, s.Wait(context.Background(), -1))
	require.Equal(t, rt.Timeout, s.Wait(context.Background(), 0), "the mark was consumed")
	s.Notify()
	require.Equal(t, rt.Fired, s.Wait(context.Background(), 0))
}

func TestEveryKeepsAFixedBeat(t *testing.T) {
	c := clock.NewFake(start)
	ctx, cancel := context.WithCancel(context.Background())
	calls := make(chan time.Time, 10)
	done := make(chan struct{})
	go func() {
		rt.Every(rt.Real(c), c, ctx, time.Second, func() { calls <- c.Now() })
		close(done)
	}()
	for i := 1; i <= 3; i++ {
		c.BlockUntil(1)
		c.Advance(time.Second)
		require.Equal(t, start.Add(time.Duration(i)*time.Second), <-calls)
	}
	cancel()
	<-done
}

func TestWithTimeoutEnds(t *testing.T) {
	ctx, cancel := rt.Real(nil).WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
}
