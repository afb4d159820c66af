package drivertest

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/world"
)

var sweepCases = []Case{
	{"SweepRevokesThenGrantsHomeNextEpoch", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		e.handoff("w1", "home", "node", 1)
		e.h.Clock.Advance(term - time.Microsecond)
		res, err := e.d.LeaseSweepExpired(e.ctx, &driver.LeaseSweepParams{})
		require.NoError(t, err)
		require.Empty(t, res.Swept, "nothing expires early")
		require.Zero(t, res.Candidates)
		e.h.Clock.Advance(time.Microsecond)
		res, err = e.d.LeaseSweepExpired(e.ctx, &driver.LeaseSweepParams{})
		require.NoError(t, err)
		require.Len(t, res.Swept, 1)
		require.Equal(t, StartTime.Add(term), res.Swept[0].ExpiredAt)
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
				res, err := e.d.LeaseSweepExpired(e.ctx, &driver.LeaseSweepParams{})
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				total += len(res.Swept)
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
			res, err := e.d.LeaseSweepExpired(e.ctx, &driver.LeaseSweepParams{Limit: 10})
			require.NoError(t, err)
			require.LessOrEqual(t, len(res.Swept), 10)
			batches++
			total += len(res.Swept)
			if res.Candidates < 10 {
				break
			}
		}
		require.Equal(t, 25, total)
		require.Equal(t, 3, batches)
		for i := range 25 {
			require.Equal(t, int64(2), e.get(fmt.Sprintf("w%02d", i)).Epoch)
		}
	}},
	{"ConcurrentSweepersSweepEveryExpiredWorld", func(t *testing.T, f Factory) {
		// Two sweepers scanning the same candidates each sweep only part of
		// every batch; both must keep going until none are expired.
		e := newEnv(t, f)
		const n = 300
		for i := range n {
			e.create(fmt.Sprintf("w%03d", i), "home")
		}
		e.h.Clock.Advance(term)
		var wg sync.WaitGroup
		var swept [2]int
		for i := range 2 {
			wg.Go(func() {
				s := world.NewSweeper(e.d, e.h.Clock, lease.WorldDefaults(), slog.New(slog.DiscardHandler))
				var err error
				swept[i], err = s.SweepOnce(e.ctx)
				assert.NoError(t, err)
			})
		}
		wg.Wait()
		require.Equal(t, n, swept[0]+swept[1])
		res, err := e.d.LeaseSweepExpired(e.ctx, &driver.LeaseSweepParams{})
		require.NoError(t, err)
		require.Zero(t, res.Candidates, "nothing left expired after one period")
	}},
}
