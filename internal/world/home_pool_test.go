package world_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// TestDeadHomeIsReplacedByAnotherHomeReplicaWithinPPlusS is issue 11's
// acceptance test ("Home is a pool, not a name"): replicas home-1 and
// home-2 serve the pool "home"; a world homed on the pool is held by
// home-1. home-1 dies — it stops renewing both its world lease and its
// membership — while home-2 keeps renewing its membership. The sweeper,
// run every P, grants the world to home-2 (not back to the dead home-1,
// and not to the name "home", which nobody holds), and the grant's store
// time is within P + S of the lease's expiry. Before pools the sweep
// granted the name "home" every term and the world stalled.
func TestDeadHomeIsReplacedByAnotherHomeReplicaWithinPPlusS(t *testing.T) {
	t.Parallel()
	forEachFakeDriver(t, func(t *testing.T, d driver.Driver, c *clock.Fake) {
		ctx := context.Background()
		tm := lease.WorldDefaults()
		join := func(node string) {
			_, err := d.HomeJoin(ctx, &driver.HomeJoinParams{Pool: "home", Node: node, Term: tm.Lease})
			require.NoError(t, err)
		}
		join("home-1")
		join("home-2")
		_, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w", Home: "home", Term: tm.Lease})
		require.NoError(t, err)
		change := func(op string, plan func(s journal.State, now time.Time) (journal.Plan, error)) {
			_, err := d.LeaseChange(ctx, &driver.LeaseChangeParams{World: "w", Op: op,
				Plan: func(w *driver.World, now time.Time) (journal.Plan, error) { return plan(w.State, now) }})
			require.NoError(t, err)
		}
		change("handoff", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanHandoff(s, now, "home", "home-1", 1, tm.Lease)
		})

		sweeper := world.NewSweeper(d, c, tm, slog.New(slog.DiscardHandler))
		const step = 100 * time.Millisecond
		dies := sweepStart.Add(12*time.Second + 300*time.Millisecond) // off the sweeper's ticks
		// home-1 renews off the sweeper's ticks, so its lease expires
		// between two sweeps.
		lastRenew1, lastRenew2, lastSweep := sweepStart.Add(-300*time.Millisecond), sweepStart, sweepStart
		var expiredAt time.Time
		for {
			c.Advance(step)
			now := c.Now()
			require.Less(t, now.Sub(sweepStart), 5*tm.Lease, "the world was never granted to home-2")
			if now.Before(dies) && now.Sub(lastRenew1) >= tm.Renew { // home-1, while alive
				change("renew", func(s journal.State, at time.Time) (journal.Plan, error) {
					return journal.PlanRenew(s, at, "home-1", 2, tm.Lease)
				})
				join("home-1")
				lastRenew1 = now
			}
			if now.Sub(lastRenew2) >= tm.Renew { // home-2 lives on
				join("home-2")
				lastRenew2 = now
			}
			if now.Sub(lastSweep) >= tm.Poll {
				lastSweep = now
				_, err := sweeper.SweepOnce(ctx)
				require.NoError(t, err)
			}
			w, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "w"})
			require.NoError(t, err)
			if w.Epoch == 2 {
				expiredAt = w.ExpiresAt
				continue
			}
			require.Equal(t, int64(3), w.Epoch, "one sweep")
			require.Equal(t, "home-2", w.Holder, "granted to the live replica, not the dead holder or the pool's name")
			es, err := d.JournalRead(ctx, &driver.JournalReadParams{World: "w", From: 1})
			require.NoError(t, err)
			granted := es[len(es)-1]
			require.Equal(t, journal.KindGranted, granted.Kind)
			require.Equal(t, "home-2", granted.Holder)
			require.JSONEq(t, `{"holder":"home-1","epoch":2,"reason":"expiry"}`, string(es[len(es)-2].Payload))
			delay := granted.StoreTime.Sub(expiredAt)
			t.Logf("home-1 died at +%s, its lease expired at +%s, home-2 granted at +%s: %s after expiry (P + S = %s)",
				dies.Sub(sweepStart), expiredAt.Sub(sweepStart), granted.StoreTime.Sub(sweepStart), delay, tm.Poll+tm.Skew)
			require.GreaterOrEqual(t, delay, time.Duration(0))
			require.LessOrEqual(t, delay, tm.Poll+tm.Skew)
			require.Equal(t, lastRenew1.Add(tm.Lease), expiredAt, "expiry of home-1's last renewal")
			require.Positive(t, delay, "the expiry fell between two sweeps")
			a := journal.NewAuditor()
			for i := range es {
				require.NoError(t, a.Add(&es[i]))
			}
			return
		}
	})
}

// countingLive counts HomeLive calls.
type countingLive struct {
	driver.Driver
	n int
}

func (c *countingLive) HomeLive(ctx context.Context, p *driver.HomeLiveParams) ([]driver.HomeReplica, error) {
	c.n++
	return c.Driver.HomeLive(ctx, p)
}

// TestSweepReadsEachHomePoolOnce: one SweepExpired pass reads the live
// replicas of each home pool once, however many of its worlds expired and
// however many batches they take; worlds of a pool with no live replica are
// granted its Home name, as before pools.
func TestSweepReadsEachHomePoolOnce(t *testing.T) {
	t.Parallel()
	forEachFakeDriver(t, func(t *testing.T, d driver.Driver, c *clock.Fake) {
		ctx := context.Background()
		for _, n := range []string{"a-1", "a-2"} {
			_, err := d.HomeJoin(ctx, &driver.HomeJoinParams{Pool: "pool-a", Node: n, Term: 10 * sweepTerm})
			require.NoError(t, err)
		}
		for i := range 20 {
			home := []string{"pool-a", "pool-b"}[i%2]
			_, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: fmt.Sprintf("w%02d", i), Home: home, Term: sweepTerm})
			require.NoError(t, err)
		}
		c.Advance(sweepTerm)
		cd := &countingLive{Driver: d}
		rep, err := world.SweepExpired(ctx, cd, 3)
		require.NoError(t, err)
		require.Len(t, rep.Swept, 20)
		require.Equal(t, 2, cd.n, "one read per pool per pass")
		for i, sw := range rep.Swept {
			if i%2 == 0 {
				require.Contains(t, []string{"a-1", "a-2"}, sw.Granted.Holder, sw.World)
			} else {
				require.Equal(t, "pool-b", sw.Granted.Holder, "no live replica: the Home name")
			}
		}
	})
}
