package drivertest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

var sweepCases = []Case{
	{"SweepRevokesThenGrantsHomeNextEpoch", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		e.handoff("w1", "home", "node", 1)
		e.h.Clock.Advance(term - time.Microsecond)
		swept, err := e.d.LeaseSweepExpired(e.ctx, &driver.LeaseSweepParams{})
		require.NoError(t, err)
		require.Empty(t, swept, "nothing expires early")
		e.h.Clock.Advance(time.Microsecond)
		swept, err = e.d.LeaseSweepExpired(e.ctx, &driver.LeaseSweepParams{})
		require.NoError(t, err)
		require.Len(t, swept, 1)
		require.Equal(t, StartTime.Add(term), swept[0].ExpiredAt)
		es := e.read("w1")
		require.Len(t, es, 4)
		require.Equal(t, journal.KindRevoked, es[2].Kind)
		require.JSONEq(t, `{"holder":"node","epoch":2,"reason":"expiry"}`, string(es[2].Payload))
		require.Equal(t, journal.KindGranted, es[3].Kind)
		w := e.get("w1")
		require.Equal(t, int64(3), w.Epoch)
		require.Equal(t, "home", w.Holder)
		_, err = e.append1("w1", "node", 2, 2, "x", "{}")
		require.ErrorIs(t, err, driver.ErrFenced)
		e.audit("w1")
	}},
	{"ConcurrentSweepsGrantOnce", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		e.h.Clock.Advance(term)
		var wg sync.WaitGroup
		var mu sync.Mutex
		total := 0
		for range 8 {
			wg.Go(func() {
				swept, err := e.d.LeaseSweepExpired(e.ctx, &driver.LeaseSweepParams{})
				require.NoError(t, err)
				mu.Lock()
				total += len(swept)
				mu.Unlock()
			})
		}
		wg.Wait()
		require.Equal(t, 1, total)
		es := e.read("w1")
		require.Equal(t, 1, countKind(es, journal.KindRevoked))
		require.Equal(t, 2, countKind(es, journal.KindGranted))
		require.Equal(t, int64(2), e.get("w1").Epoch)
		e.audit("w1")
	}},
	{"SweepRepeatsBoundedBatchesUntilNoneExpired", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		for i := range 25 {
			e.create(fmt.Sprintf("w%02d", i), "home")
		}
		e.h.Clock.Advance(term)
		var batches, total int
		for {
			swept, err := e.d.LeaseSweepExpired(e.ctx, &driver.LeaseSweepParams{Limit: 10})
			require.NoError(t, err)
			require.LessOrEqual(t, len(swept), 10)
			batches++
			total += len(swept)
			if len(swept) < 10 {
				break
			}
		}
		require.Equal(t, 25, total)
		require.Equal(t, 3, batches)
		for i := range 25 {
			require.Equal(t, int64(2), e.get(fmt.Sprintf("w%02d", i)).Epoch)
		}
	}},
}
