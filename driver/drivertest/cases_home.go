package drivertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// The home pool (SPEC §4 "Holders and home", issue 11): replicas join a
// pool with a term on the store clock, renew by joining again, and leave;
// the expiry sweep grants an expired world to a live replica of the pool
// its Home names, other than the holder whose lease expired
// (driver.HomeGrantee), or to the Home name when the pool has none. The
// sweep's loop is world.SweepExpired; these cases hold a driver to its
// part, sweeping one world as the loop does (sweepHome).

func init() {
	sweepCases = append(sweepCases, homeCases...)
}

func (e *env) join(pool, node string, t time.Duration) *driver.HomeReplica {
	e.t.Helper()
	r, err := e.d.HomeJoin(e.ctx, &driver.HomeJoinParams{Pool: pool, Node: node, Term: t})
	require.NoError(e.t, err)
	return r
}

func (e *env) live(pool string) []string {
	e.t.Helper()
	rs, err := e.d.HomeLive(e.ctx, &driver.HomeLiveParams{Pool: pool})
	require.NoError(e.t, err)
	nodes := []string{}
	for _, r := range rs {
		require.Equal(e.t, pool, r.Pool)
		nodes = append(nodes, r.Node)
	}
	return nodes
}

// sweepHome sweeps one world as world.SweepExpired does: the grantee is a
// live replica of the world's home pool (driver.HomeGrantee), else Home.
func (e *env) sweepHome(world string) (granted string, swept bool, err error) {
	w, err := e.d.WorldGet(e.ctx, &driver.WorldGetParams{World: world})
	if err != nil {
		return "", false, err
	}
	live, err := e.d.HomeLive(e.ctx, &driver.HomeLiveParams{Pool: w.Home})
	if err != nil {
		return "", false, err
	}
	_, err = e.d.LeaseChange(e.ctx, &driver.LeaseChangeParams{World: world, Op: "sweep",
		Plan: func(w *driver.World, now time.Time) (journal.Plan, error) {
			to, ok := driver.HomeGrantee(w.World, w.Holder, live)
			if !ok {
				to = w.Home
			}
			plan, ok := journal.PlanSweep(w.State, now, to, w.DefaultTerm)
			swept, granted = ok, to
			return plan, nil
		}})
	return granted, swept, err
}

var homeCases = []Case{
	{"HomeJoinRenewLiveExpiryLeave", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		require.Empty(t, e.live("home"), "a pool nobody joined has no replica")
		r := e.join("home", "home-2", term)
		require.Equal(t, driver.HomeReplica{Pool: "home", Node: "home-2", ExpiresAt: StartTime.Add(term)}, *r,
			"expiry at store now + term")
		e.join("home", "home-1", 2*term)
		e.join("other", "home-3", term)
		require.Equal(t, []string{"home-1", "home-2"}, e.live("home"), "by node, this pool only")
		e.h.Clock.Advance(term / 2)
		r = e.join("home", "home-2", term) // a renewal is a join
		require.Equal(t, StartTime.Add(term/2+term), r.ExpiresAt, "renewed from store now")
		e.h.Clock.Advance(term - time.Microsecond) // just before home-2's renewed expiry
		require.Equal(t, []string{"home-1", "home-2"}, e.live("home"))
		e.h.Clock.Advance(time.Microsecond)
		require.Equal(t, []string{"home-1"}, e.live("home"), "expired on the store clock at expires_at")
		require.Empty(t, e.live("other"))
		e.join("home", "home-2", term)
		require.Equal(t, []string{"home-1", "home-2"}, e.live("home"), "an expired replica rejoins")
		require.NoError(t, e.d.HomeLeave(e.ctx, &driver.HomeLeaveParams{Pool: "home", Node: "home-1"}))
		require.Equal(t, []string{"home-2"}, e.live("home"), "a replica that left is not live")
		require.NoError(t, e.d.HomeLeave(e.ctx, &driver.HomeLeaveParams{Pool: "home", Node: "home-1"}),
			"leaving twice is not an error")
	}},
	{"HomeBadParamsRefusedAndWriteNothing", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.join("home", "n", term)
		before, err := e.fingerprint()
		require.NoError(t, err)
		calls := map[string]func() error{
			"join empty pool": func() error { return ignore(e.d.HomeJoin(e.ctx, &driver.HomeJoinParams{Node: "n", Term: term})) },
			"join bad pool": func() error {
				return ignore(e.d.HomeJoin(e.ctx, &driver.HomeJoinParams{Pool: "p\x00", Node: "n", Term: term}))
			},
			"join bad node": func() error {
				return ignore(e.d.HomeJoin(e.ctx, &driver.HomeJoinParams{Pool: "home", Node: "n n", Term: term}))
			},
			"join zero term": func() error { return ignore(e.d.HomeJoin(e.ctx, &driver.HomeJoinParams{Pool: "home", Node: "n"})) },
			"join negative term": func() error {
				return ignore(e.d.HomeJoin(e.ctx, &driver.HomeJoinParams{Pool: "home", Node: "n", Term: -time.Second}))
			},
			"join term over max": func() error {
				return ignore(e.d.HomeJoin(e.ctx, &driver.HomeJoinParams{Pool: "home", Node: "n", Term: journal.MaxTerm + 1}))
			},
			"leave empty node": func() error { return e.d.HomeLeave(e.ctx, &driver.HomeLeaveParams{Pool: "home"}) },
			"leave bad pool": func() error {
				return e.d.HomeLeave(e.ctx, &driver.HomeLeaveParams{Pool: "home\xff", Node: "n"})
			},
			"live empty pool": func() error { return ignore(e.d.HomeLive(e.ctx, &driver.HomeLiveParams{})) },
			"live bad pool":   func() error { return ignore(e.d.HomeLive(e.ctx, &driver.HomeLiveParams{Pool: "a b"})) },
		}
		for name, call := range calls {
			require.ErrorIs(t, call(), driver.ErrInvalid, name)
		}
		after, err := e.fingerprint()
		require.NoError(t, err)
		require.Equal(t, before, after, "a refused call wrote nothing")
		require.Equal(t, []string{"n"}, e.live("home"))
	}},
	{"SweepGrantsALiveHomeReplicaNotTheExpiredHolder", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.join("home", "home-1", 10*term)
		e.join("home", "home-2", 10*term)
		for _, w := range []string{"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"} {
			e.create(w, "home")
			e.handoff(w, "home", "home-1", 1) // home-1 holds it, then dies
		}
		e.h.Clock.Advance(term)
		for _, w := range []string{"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"} {
			to, ok, err := e.sweepHome(w)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, "home-2", to, "the live replica that is not the expired holder")
			got := e.get(w)
			require.Equal(t, "home-2", got.Holder)
			require.Equal(t, int64(3), got.Epoch)
			es := e.read(w)
			require.JSONEq(t, `{"holder":"home-1","epoch":2,"reason":"expiry"}`, string(es[2].Payload))
			require.Equal(t, journal.KindGranted, es[3].Kind)
			require.Equal(t, "home-2", es[3].Holder)
			e.audit(w)
		}
	}},
	{"SweepSpreadsWorldsOverLiveHomeReplicas", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		for _, n := range []string{"home-1", "home-2", "home-3"} {
			e.join("home", n, 10*term)
		}
		worlds := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
		for _, w := range worlds {
			e.create(w, "home") // held by the pool's name, which is no replica
		}
		e.h.Clock.Advance(term)
		seen := map[string]int{}
		for _, w := range worlds {
			to, ok, err := e.sweepHome(w)
			require.NoError(t, err)
			require.True(t, ok)
			require.Contains(t, []string{"home-1", "home-2", "home-3"}, to)
			require.Equal(t, to, e.get(w).Holder)
			seen[to]++
			e.audit(w)
		}
		require.Greater(t, len(seen), 1, "worlds are spread over the replicas: %v", seen)
	}},
	{"SweepWithNoLiveHomeReplicaGrantsHome", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.join("home", "home-1", term/2) // dies before the world expires
		e.join("home", "home-2", 10*term)
		require.NoError(t, e.d.HomeLeave(e.ctx, &driver.HomeLeaveParams{Pool: "home", Node: "home-2"}))
		e.create("w", "home")
		e.handoff("w", "home", "node", 1)
		e.h.Clock.Advance(term)
		require.Empty(t, e.live("home"))
		to, ok, err := e.sweepHome("w")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "home", to, "no live replica: the Home name, as before pools")
		require.Equal(t, "home", e.get("w").Holder)
		e.audit("w")
		// The only live replica is the expired holder: Home again.
		e.create("v", "home")
		e.handoff("v", "home", "home-3", 1)
		e.join("home", "home-3", 10*term)
		e.h.Clock.Advance(term)
		to, ok, err = e.sweepHome("v")
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "home", to, "the expired holder is never the grantee")
		e.audit("v")
	}},
}
