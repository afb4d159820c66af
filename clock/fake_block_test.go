package clock_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
)

func TestFakeBlockUntilWaitsForArming(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	clk.BlockUntil(0) // already satisfied: must not block

	arm := make(chan struct{})
	fired := make(chan time.Time)
	go func() {
		<-arm
		_, ch := clk.NewTimer(5 * time.Second)
		fired <- <-ch
	}()

	unblocked := make(chan struct{})
	go func() {
		clk.BlockUntil(1)
		close(unblocked)
	}()
	select {
	case <-unblocked:
		require.FailNow(t, "BlockUntil returned before any timer was armed")
	default:
	}

	close(arm)
	<-unblocked
	require.Equal(t, 1, clk.PendingTimers())
	clk.Advance(5 * time.Second)
	require.Equal(t, epoch.Add(5*time.Second), <-fired)
}

// TestFakeDrivesABackgroundLoop is the pattern the keeper and reclaimer
// tests use: wait for the loop to arm its ticker, then step time and observe
// each wake-up through a channel, never a sleep.
func TestFakeDrivesABackgroundLoop(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	woke := make(chan time.Time)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk, ch := clk.NewTicker(time.Second)
		defer tk.Stop()
		for {
			select {
			case now := <-ch:
				woke <- now
			case <-stop:
				return
			}
		}
	}()

	clk.BlockUntil(1)
	for i := 1; i <= 3; i++ {
		clk.Advance(time.Second)
		require.Equal(t, epoch.Add(time.Duration(i)*time.Second), <-woke)
	}
	close(stop)
	<-done
}

func TestFakeConcurrentUse(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(epoch)
	const workers, each = 8, 200
	var ran, stopped atomic.Int64

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				d := time.Duration(w*each+i) % 50 * time.Millisecond
				fn := clk.AfterFunc(d, func() { ran.Add(1) })
				tm, _ := clk.NewTimer(d)
				tm.Reset(2 * d)
				tm.Stop()
				_ = clk.Now()
				_ = clk.PendingTimers()
				if i%3 == 0 && fn.Stop() {
					stopped.Add(1)
				}
			}
		})
	}
	wg.Go(func() {
		for range workers * each {
			clk.Advance(time.Millisecond)
		}
	})
	wg.Wait()

	clk.Advance(time.Second)
	require.Equal(t, int64(workers*each), ran.Load()+stopped.Load(),
		"every AfterFunc either ran exactly once or was stopped")
	require.Equal(t, 0, clk.PendingTimers())
}
