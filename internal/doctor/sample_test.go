package doctor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/doctor"
)

// TestSampleProbeArithmetic pins the NTP arithmetic: the app's instant is
// the round trip's midpoint, the offset is measured from it, the bound is
// half the round trip.
func TestSampleProbeArithmetic(t *testing.T) {
	t.Parallel()
	// 4ms round trips; the store reads its clock 1ms in, 1s ahead.
	f := &fakeStore{clk: clock.NewFake(epoch), offset: time.Second,
		rtts: []time.Duration{4 * time.Millisecond}, fracs: []float64{0.25}}
	ps := sample(t, f, 2, time.Second)

	require.Equal(t, doctor.Probe{
		Index:  0,
		At:     2 * time.Millisecond,
		App:    epoch.Add(2 * time.Millisecond),
		Store:  epoch.Add(time.Second + time.Millisecond),
		RTT:    4 * time.Millisecond,
		Offset: time.Second - time.Millisecond,
	}, ps[0])
	require.Equal(t, 2*time.Millisecond, ps[0].Bound())
	// The wait starts when the first probe ends.
	require.Equal(t, time.Second+6*time.Millisecond, ps[1].At)
	require.Equal(t, 1, ps[1].Index)
}

func TestSampleBackToBack(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	f := &fakeStore{clk: clk}
	// every <= 0 arms no timer, so Sample returns without anyone advancing.
	ps, err := doctor.Sample(context.Background(), f, clk, 3, 0)
	require.NoError(t, err)
	require.Len(t, ps, 3)
	require.Equal(t, 2*time.Millisecond+500*time.Microsecond, ps[2].At)
}

func TestSampleReturnsWhatItHasOnError(t *testing.T) {
	t.Parallel()
	t.Run("store call fails", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(epoch)
		boom := errors.New("connection reset")
		f := &fakeStore{clk: clk, err: boom, failAt: 2}
		ps, err := doctor.Sample(context.Background(), f, clk, 5, 0)
		require.ErrorIs(t, err, boom)
		require.ErrorContains(t, err, "doctor: probe 2: connection reset")
		require.Len(t, ps, 2)
	})

	t.Run("context ends during a wait", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(epoch)
		f := &fakeStore{clk: clk}
		ctx, cancel := context.WithCancel(context.Background())
		type result struct {
			ps  []doctor.Probe
			err error
		}
		done := make(chan result, 1)
		go func() {
			ps, err := doctor.Sample(ctx, f, clk, 3, time.Second)
			done <- result{ps, err}
		}()
		clk.BlockUntil(1)
		cancel()
		r := <-done
		require.ErrorIs(t, r.err, context.Canceled)
		require.Len(t, r.ps, 1)
		require.Equal(t, 0, clk.PendingTimers(), "the wait's timer is stopped")
	})

	t.Run("no probes asked for", func(t *testing.T) {
		t.Parallel()
		clk := clock.NewFake(epoch)
		_, err := doctor.Sample(context.Background(), &fakeStore{clk: clk}, clk, 0, time.Second)
		require.Error(t, err)
	})
}
