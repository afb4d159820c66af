package drivertest

import (
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// The home pool's entry points (HomeJoin, HomeLeave, HomeLive): each call
// names its own pool p<n> and node n<n>, so no call sees another's rows.

func (x *hx) pool() string { return fmt.Sprintf("p%d", x.n) }
func (x *hx) node() string { return fmt.Sprintf("n%d", x.n) }

// liveIs requires exactly node live in pool, its membership ending at
// store now + term.
func (x *hx) liveIs(pool, node string, term time.Duration) error {
	rs, err := x.d.HomeLive(x.ctx, &driver.HomeLiveParams{Pool: pool})
	if err != nil {
		return err
	}
	if len(rs) != 1 {
		return fmt.Errorf("%d replicas live in the pool, want 1", len(rs))
	}
	if err := sameString("pool", rs[0].Pool, pool); err != nil {
		return err
	}
	if err := sameString("node", rs[0].Node, node); err != nil {
		return err
	}
	now, err := x.d.StoreNow(x.ctx)
	if err != nil {
		return err
	}
	return sameTime("expires_at", rs[0].ExpiresAt, now.Add(term))
}

func homeEntries() []hostileEntry {
	d := func(x *hx) driver.Driver { return x.d }
	join := func(x *hx, pool, node string, t time.Duration) error {
		return ignore(d(x).HomeJoin(x.ctx, &driver.HomeJoinParams{Pool: pool, Node: node, Term: t}))
	}
	// left: after an accepted leave, the node is no longer live.
	left := func(x *hx, pool, node string) func() error {
		return func() error {
			rs, err := d(x).HomeLive(x.ctx, &driver.HomeLiveParams{Pool: pool})
			if err != nil {
				return err
			}
			for _, r := range rs {
				if r.Node == node {
					return fmt.Errorf("node %q is still live after it left", node)
				}
			}
			return nil
		}
	}
	return []hostileEntry{
		str("HomeJoin.pool", func(x *hx, v string) hostileCall {
			return hostileCall{func() error { return join(x, v, x.node(), term) },
				func() error { return x.liveIs(v, x.node(), term) }}
		}),
		str("HomeJoin.node", func(x *hx, v string) hostileCall {
			return hostileCall{func() error { return join(x, x.pool(), v, term) },
				func() error { return x.liveIs(x.pool(), v, term) }}
		}),
		dur("HomeJoin.term", func(x *hx, v time.Duration) hostileCall {
			return hostileCall{func() error { return join(x, x.pool(), x.node(), v) },
				func() error { return x.liveIs(x.pool(), x.node(), wholeMS(v)) }}
		}),
		str("HomeLeave.pool", func(x *hx, v string) hostileCall {
			_ = join(x, v, x.node(), term) // refused for a value the rules refuse
			return hostileCall{func() error {
				return d(x).HomeLeave(x.ctx, &driver.HomeLeaveParams{Pool: v, Node: x.node()})
			}, left(x, v, x.node())}
		}),
		str("HomeLeave.node", func(x *hx, v string) hostileCall {
			_ = join(x, x.pool(), v, term)
			return hostileCall{func() error {
				return d(x).HomeLeave(x.ctx, &driver.HomeLeaveParams{Pool: x.pool(), Node: v})
			}, left(x, x.pool(), v)}
		}),
		str("HomeLive.pool", func(x *hx, v string) hostileCall {
			return readOnly(func() error { return ignore(d(x).HomeLive(x.ctx, &driver.HomeLiveParams{Pool: v})) })
		}),
	}
}
