package host_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// poolTiming is a short world timing, so a lease expires within the test.
var poolTiming = lease.Timing{Lease: 2 * time.Second, Renew: 200 * time.Millisecond, Drain: 100 * time.Millisecond,
	Stop: time.Second, Skew: 500 * time.Millisecond, Poll: 100 * time.Millisecond, Margin: 100 * time.Millisecond}

func livePool(t *testing.T, d driver.Driver, pool string) []string {
	rs, err := d.HomeLive(context.Background(), &driver.HomeLiveParams{Pool: pool})
	require.NoError(t, err)
	nodes := []string{}
	for _, r := range rs {
		nodes = append(nodes, r.Node)
	}
	return nodes
}

// looked waits until every host has made its first look at n worlds (the
// home pool's looks: nobody calls Prepare).
func looked(t *testing.T, n int64, hosts map[string]*host.Host) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, h := range hosts {
			if h.Stats().Looked < n {
				return false
			}
		}
		return true
	}, 10*poolTiming.Lease, 10*time.Millisecond, "every replica looks at its pool's worlds by itself")
	for node, h := range hosts {
		require.Equal(t, n, h.Stats().Looked, node)
	}
}

// waitEpoch waits until world w's epoch reaches epoch, and checks it is
// exactly that.
func waitEpoch(t *testing.T, d driver.Driver, w string, epoch int64) *driver.World {
	t.Helper()
	var got *driver.World
	require.Eventually(t, func() bool {
		var err error
		got, err = d.WorldGet(context.Background(), &driver.WorldGetParams{World: w})
		require.NoError(t, err)
		return got.Epoch >= epoch
	}, 10*poolTiming.Lease, 10*time.Millisecond)
	require.Equal(t, epoch, got.Epoch)
	return got
}

func pooled(c *host.Config) { c.HomePool, c.Timing = "home", poolTiming }

// TestHostsServeAHomePool (issue 11, with real hosts): two hosts serving
// the home pool "home" join it at start and stay members while they run;
// each looks at the world homed on the pool by itself at start (no
// Prepare); the world is granted by the sweep to one of them; that host
// is stopped while holding it (its lease is left to expire, and it leaves
// the pool), and the sweep grants the world to the other replica within
// P + S of the expiry, which then serves it.
func TestHostsServeAHomePool(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		// Created before the hosts start: their first look at it is the
		// one each makes right after joining the pool.
		_, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w", Home: "home", Term: poolTiming.Lease})
		require.NoError(t, err)
		hosts := map[string]*host.Host{
			"home-1": newHost(t, d, "home-1", programs.Bank{}, pooled),
			"home-2": newHost(t, d, "home-2", programs.Bank{}, pooled),
		}
		require.Equal(t, []string{"home-1", "home-2"}, livePool(t, d, "home"), "both joined at start")
		joined, err := d.HomeLive(ctx, &driver.HomeLiveParams{Pool: "home"})
		require.NoError(t, err)
		// Each renews its membership: both expiries move past the ones
		// the joins wrote (waited on, not slept on: a loaded machine may
		// take longer than one T_renew).
		require.Eventually(t, func() bool {
			now, err := d.HomeLive(ctx, &driver.HomeLiveParams{Pool: "home"})
			require.NoError(t, err)
			return len(now) == 2 && now[0].ExpiresAt.After(joined[0].ExpiresAt) && now[1].ExpiresAt.After(joined[1].ExpiresAt)
		}, 10*poolTiming.Lease, 10*time.Millisecond, "both renew their membership")
		looked(t, 1, hosts) // the first look, before any replica is granted it

		sw := world.NewSweeper(d, clock.Real(), poolTiming, slog.New(slog.DiscardHandler))
		require.NoError(t, sw.Start(ctx))
		t.Cleanup(func() { require.NoError(t, sw.Stop(context.Background())) })

		w := waitEpoch(t, d, "w", 2) // "home" (the pool's name) expired: a replica is granted it
		first := w.Holder
		require.Contains(t, hosts, first)
		_, err = hosts[first].Submit(ctx, "w", deposit("a", 1))
		require.NoError(t, err, "the granted replica serves the world")

		require.NoError(t, hosts[first].Stop(ctx)) // dies holding the world
		w, err = d.WorldGet(ctx, &driver.WorldGetParams{World: "w"})
		require.NoError(t, err)
		require.Equal(t, int64(2), w.Epoch)
		expiry := w.ExpiresAt
		other := "home-1"
		if first == "home-1" {
			other = "home-2"
		}
		require.Equal(t, []string{other}, livePool(t, d, "home"), "a stopped host left the pool")

		w = waitEpoch(t, d, "w", 3)
		require.Equal(t, other, w.Holder, "granted to the live replica")
		es := journalOf(t, d, "w")
		granted := es[len(es)-1]
		require.Equal(t, journal.KindGranted, granted.Kind)
		delay := granted.StoreTime.Sub(expiry)
		t.Logf("%s stopped holding w; its lease expired, %s granted %s after (P + S = %s)", first, other, delay, poolTiming.Poll+poolTiming.Skew)
		// The P + S bound is asserted on a fake clock, where the sweeper's
		// beat is exact (internal/world TestDeadHomeIsReplacedByAnotherHomeReplicaWithinPPlusS);
		// here the sweeper runs on the real clock of a possibly loaded
		// machine, so the delay is reported, and only its sign checked.
		require.GreaterOrEqual(t, delay, time.Duration(0))
		_, err = hosts[other].Submit(ctx, "w", deposit("a", 2))
		require.NoError(t, err, "the other replica serves the world")
		require.True(t, slices.Contains(hosts[other].Held(), "w"))
		auditOK(t, journalOf(t, d, "w"))
	})
}

// TestAHomePoolLooksAtWorldsCreatedLater: a world homed on the pool and
// created after its replicas started is looked at by each on a later
// renewal tick, and the replica the sweep grants it to adopts the grant and
// serves it; the replicas look at each world once, and never at a world
// homed elsewhere.
func TestAHomePoolLooksAtWorldsCreatedLater(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		create := func(w, home string) {
			_, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: w, Home: home, Term: poolTiming.Lease})
			require.NoError(t, err)
		}
		create("early", "home")
		create("elsewhere", "other")
		hosts := map[string]*host.Host{
			"home-1": newHost(t, d, "home-1", programs.Bank{}, pooled),
			"home-2": newHost(t, d, "home-2", programs.Bank{}, pooled),
		}
		looked(t, 1, hosts) // "early", at start; not "elsewhere"

		create("late", "home")
		looked(t, 2, hosts) // "late", on a later tick
		sw := world.NewSweeper(d, clock.Real(), poolTiming, slog.New(slog.DiscardHandler))
		require.NoError(t, sw.Start(ctx))
		t.Cleanup(func() { require.NoError(t, sw.Stop(context.Background())) })

		w := waitEpoch(t, d, "late", 2) // "home" (the pool's name) expired: a replica is granted it
		require.Contains(t, hosts, w.Holder)
		want, ok := driver.HomeGrantee("late", "home", []driver.HomeReplica{{Node: "home-1"}, {Node: "home-2"}})
		require.True(t, ok)
		require.Equal(t, want, w.Holder)
		_, err := hosts[w.Holder].Submit(ctx, "late", deposit("a", 1))
		require.NoError(t, err, "the granted replica serves the world it looked at on a later tick")
		require.True(t, slices.Contains(hosts[w.Holder].Held(), "late"))
		for node, h := range hosts {
			if node != w.Holder {
				_, err := h.Submit(ctx, "late", deposit("a", 2))
				var nh *host.NotHolderError
				require.ErrorAs(t, err, &nh, "the other replica does not serve it")
			}
		}
		// Later ticks look at nothing again (two worlds each, and no more).
		for node, h := range hosts {
			require.Equal(t, int64(2), h.Stats().Looked, node)
		}
		auditOK(t, journalOf(t, d, "late"))
	})
}

// TestHostHomePoolNeedsAValidPool: a bad pool name is refused at New.
func TestHostHomePoolNeedsAValidPool(t *testing.T) {
	t.Parallel()
	d := openSQLite(t)
	_, err := host.New(host.Config{Store: d, Node: "n", Program: programs.Bank{}, HomePool: "a b"})
	require.ErrorIs(t, err, lease.ErrInvalid)
}

// TestHostCreateHomesAWorldOnItsPool: a pool replica's Create homes the new
// world on the pool, held by the creator; when the creator dies holding
// it, the sweep grants it to the other live replica, which serves it.
func TestHostCreateHomesAWorldOnItsPool(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		hosts := map[string]*host.Host{
			"home-1": newHost(t, d, "home-1", programs.Bank{}, pooled),
			"home-2": newHost(t, d, "home-2", programs.Bank{}, pooled),
		}
		require.NoError(t, hosts["home-1"].Create(ctx, "made"))
		w, err := d.WorldGet(ctx, &driver.WorldGetParams{World: "made"})
		require.NoError(t, err)
		require.Equal(t, "home", w.Home, "homed on the pool")
		require.Equal(t, "home-1", w.Holder, "held by its creator")
		_, err = hosts["home-1"].Submit(ctx, "made", deposit("a", 1))
		require.NoError(t, err)
		looked(t, 1, map[string]*host.Host{"home-2": hosts["home-2"]}) // the other replica's look, on a tick

		sw := world.NewSweeper(d, clock.Real(), poolTiming, slog.New(slog.DiscardHandler))
		require.NoError(t, sw.Start(ctx))
		t.Cleanup(func() { require.NoError(t, sw.Stop(context.Background())) })
		require.NoError(t, hosts["home-1"].Stop(ctx)) // dies holding the world
		w = waitEpoch(t, d, "made", 2)
		require.Equal(t, "home-2", w.Holder, "granted to the live replica, not to the pool's name")
		_, err = hosts["home-2"].Submit(ctx, "made", deposit("a", 2))
		require.NoError(t, err)
		auditOK(t, journalOf(t, d, "made"))
	})
}

// lookDuringCreate is a store whose WorldCreate, once the world exists,
// lets the creating host's pool look at it at once if it can: the
// interleaving where the look's tick lands between the create and the
// acquire.
type lookDuringCreate struct {
	driver.Driver
	h      *host.Host
	looked bool
}

func (s *lookDuringCreate) WorldCreate(ctx context.Context, p *driver.WorldCreateParams) (*driver.World, error) {
	w, err := s.Driver.WorldCreate(ctx, p)
	if err == nil && s.h != nil {
		s.looked = host.LookNowIfFree(s.h, w)
	}
	return w, err
}

// TestCreateIsNotUndoneByThePoolsLook: a pool replica's own look at the
// pool cannot land between its WorldCreate and the acquire (it used to,
// fixing the holder's horizon at epoch 1 so Create answered "not held
// here; holder is home-1": seen in CI under load).
func TestCreateIsNotUndoneByThePoolsLook(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		s := &lookDuringCreate{Driver: d}
		h := newHost(t, s, "home-1", programs.Bank{}, pooled)
		s.h = h
		require.NoError(t, h.Create(ctx, "made"))
		require.False(t, s.looked, "the look found the new world's slot free between the create and the acquire")
		_, err := h.Submit(ctx, "made", deposit("a", 1))
		require.NoError(t, err)
	})
}
