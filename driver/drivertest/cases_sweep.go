package drivertest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// The expiry sweep's loop is world.SweepExpired, once for every driver;
// what a driver must do for it is here: scan the held, expired leases in
// (expiry, id) order on a cursor, and sweep one world through LeaseChange
// with journal.PlanSweep, exactly once however many sweep at once. The
// loop's own cases (bounded batches, concurrent sweepers, a world that
// cannot be swept) are world/sweep_test.go, run on both drivers.

// scan lists every expired world, limit at a time, following the cursor.
func (e *env) scan(limit int) (all []driver.ExpiredWorld, batches int) {
	e.t.Helper()
	var after *driver.ExpiredWorld
	for {
		b, err := e.d.LeaseScanExpired(e.ctx, &driver.LeaseScanParams{Limit: limit, After: after})
		require.NoError(e.t, err)
		require.LessOrEqual(e.t, len(b), limit)
		batches++
		all = append(all, b...)
		if len(b) < limit {
			return all, batches
		}
		after = &b[len(b)-1]
	}
}

// sweep1 sweeps one world through the lease change path, as
// world.SweepExpired does; it reports whether this call swept it.
func (e *env) sweep1(world string) (bool, error) {
	swept := false
	_, err := e.d.LeaseChange(e.ctx, &driver.LeaseChangeParams{World: world, Op: "sweep",
		Plan: func(w *driver.World, now time.Time) (journal.Plan, error) {
			plan, ok := journal.PlanSweep(w.State, now, w.Home, w.DefaultTerm)
			swept = ok
			return plan, nil
		}})
	return swept, err
}

var sweepCases = []Case{
	{"ScanListsHeldExpiredLeasesByExpiry", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("b", "home")
		e.h.Clock.Advance(time.Second)
		e.create("a", "home") // expires a second after b
		e.create("c", "home") // same expiry as a: id breaks the tie
		e.create("gone", "home")
		_, err := e.change("gone", "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRevoke(s, now, 1, "operator")
		})
		require.NoError(t, err)
		e.h.Clock.Advance(term - time.Second - time.Microsecond)
		got, _ := e.scan(10)
		require.Empty(t, got, "nothing expires early")
		e.h.Clock.Advance(time.Microsecond)
		got, _ = e.scan(10)
		require.Equal(t, []driver.ExpiredWorld{{World: "b", ExpiresAt: StartTime.Add(term)}}, got)
		e.h.Clock.Advance(time.Second)
		got, _ = e.scan(10)
		exp := StartTime.Add(time.Second + term)
		require.Equal(t, []driver.ExpiredWorld{
			{World: "b", ExpiresAt: StartTime.Add(term)}, {World: "a", ExpiresAt: exp}, {World: "c", ExpiresAt: exp}}, got,
			"held and expired only, by (expiry, id)")
	}},
	{"ScanPagesOnItsCursor", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		for i := range 25 {
			e.create(fmt.Sprintf("w%02d", i), "home")
		}
		e.h.Clock.Advance(term)
		got, batches := e.scan(10)
		require.Equal(t, 3, batches)
		require.Len(t, got, 25)
		for i, w := range got {
			require.Equal(t, fmt.Sprintf("w%02d", i), w.World, "each world once, in order")
		}
	}},
	{"SweepRevokesThenGrantsHomeNextEpoch", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.create("w1", "home")
		e.handoff("w1", "home", "node", 1)
		e.h.Clock.Advance(term - time.Microsecond)
		ok, err := e.sweep1("w1")
		require.NoError(t, err)
		require.False(t, ok, "nothing expires early")
		require.Len(t, e.read("w1"), 2, "and nothing is written")
		e.h.Clock.Advance(time.Microsecond)
		ok, err = e.sweep1("w1")
		require.NoError(t, err)
		require.True(t, ok)
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
				ok, err := e.sweep1("w1")
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				if ok {
					total++
				}
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
	// Issue 17, defect 14 at the store: a world created with a term finer
	// than the journal's resolution keeps a default term the sweep can
	// grant (whole milliseconds, rounded up, as the journal carries it). It
	// was kept cut to microseconds — 5ns as 0 — and its expired lease was
	// never swept: the holder refused as expired, everyone else as held.
	{"SubMillisecondTermWorldIsSwept", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		_, err := e.d.WorldCreate(e.ctx, &driver.WorldCreateParams{World: "w", Home: "home", Term: 5 * time.Nanosecond})
		require.NoError(t, err)
		require.Equal(t, time.Millisecond, e.get("w").DefaultTerm, "the term as the journal carries it")
		e.h.Clock.Advance(time.Millisecond)
		swept, err := e.sweep1("w")
		require.NoError(t, err)
		require.True(t, swept, "the expired lease is re-granted to its home")
		w := e.get("w")
		require.Equal(t, "home", w.Holder)
		require.Equal(t, int64(2), w.Epoch)
		e.audit("w")
	}},
}
