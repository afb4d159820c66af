package host

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
)

// PoolStore is what a home pool replica (Config.HomePool) needs of the
// Store beyond the host's calls: the pool membership calls and the list
// of worlds by home. A driver.Driver is one.
type PoolStore interface {
	driver.HomeStore
	// WorldList lists worlds by id; with p.Home set, only those homed there.
	WorldList(ctx context.Context, p *driver.WorldListParams) ([]*driver.World, error)
}

var _ PoolStore = driver.Driver(nil)

// poolPage is the page size of a pool look's WorldList.
const poolPage = 1000

// startHomePool joins Config.HomePool (if set) and starts the loop that
// renews the membership every T_renew with a term of T_lease and leaves
// the pool when the host stops. A renewal that fails is logged and tried
// again on the next beat; a host that cannot renew drops out of the pool
// when its membership expires, as a dead one does.
//
// Right after joining, and after each renewal, the loop makes the first
// look at the pool's worlds this generation has not looked at (lookAtPool),
// so a world the sweep grants here is adopted on its next submission.
func (h *Host) startHomePool(ctx context.Context) error {
	if h.cfg.HomePool == "" {
		return nil
	}
	ps := h.cfg.Store.(PoolStore) // checked by Config.withDefaults
	join := &driver.HomeJoinParams{Pool: h.cfg.HomePool, Node: h.cfg.Node, Term: h.cfg.Timing.Lease}
	if _, err := ps.HomeJoin(ctx, join); err != nil {
		return fmt.Errorf("host %s: joining home pool %q: %w", h.cfg.Node, h.cfg.HomePool, err)
	}
	h.life.Go("home pool", func() {
		h.lookAtPool(ctx, ps)
		rt.Every(h.cfg.Runtime, h.clock, ctx, h.cfg.Timing.Renew, func() {
			if _, err := ps.HomeJoin(ctx, join); err != nil && ctx.Err() == nil {
				h.log.Warn("renewing home pool membership failed; retrying next period",
					"pool", h.cfg.HomePool, "node", h.cfg.Node, "err", err)
			}
			h.lookAtPool(ctx, ps)
		})
		// Stopped (or the start context ended): leave, bounded by Stop's
		// context; if that fails the membership simply expires.
		if err := ps.HomeLeave(h.life.StopContext(), &driver.HomeLeaveParams{Pool: h.cfg.HomePool, Node: h.cfg.Node}); err != nil {
			h.log.Info("leaving home pool failed; the membership will expire", "pool", h.cfg.HomePool, "node", h.cfg.Node, "err", err)
		}
	})
	return nil
}

// lookAtPool pages through the worlds homed on the pool (WorldList's
// Home filter, by id) and makes this generation's first look at each one
// it has not looked at yet. A failed page or look ends the pass; the next
// beat starts a new one, and a world not looked at yet is looked at then.
//
// Why looking early is safe: a look never adopts anything. The first look
// only fixes the holder's horizon — the epoch current in the head it saw —
// and world.Holder never adopts an epoch at or below it (a predecessor
// under this node name may hold it: ABA). So a look can only make this
// generation refuse epochs that were already current when it looked; an
// epoch granted after the look (the sweep's grant of an expired world to
// this replica) is above the horizon and is adopted, which is exactly the
// grant a pool replica must be able to take. Without the look, the first
// head this generation read would be the one carrying the grant, which it
// would then refuse, and the world would stall for another term.
func (h *Host) lookAtPool(ctx context.Context, ps PoolStore) {
	after, looked := "", 0
	for ctx.Err() == nil {
		ws, err := ps.WorldList(ctx, &driver.WorldListParams{Home: h.cfg.HomePool, After: after, Limit: poolPage})
		if err != nil {
			if ctx.Err() == nil {
				h.log.Warn("listing the home pool's worlds failed; looking again next period",
					"pool", h.cfg.HomePool, "node", h.cfg.Node, "err", err)
			}
			break
		}
		for _, w := range ws {
			if h.hasLooked(w.World) {
				continue
			}
			ok, err := h.firstLook(w)
			if err != nil {
				if ctx.Err() == nil {
					h.log.Warn("looking at a home pool world failed; looking again next period",
						"pool", h.cfg.HomePool, "node", h.cfg.Node, "world", w.World, "err", err)
				}
				return
			}
			if ok {
				looked++
			}
		}
		if len(ws) < poolPage {
			break
		}
		after = ws[len(ws)-1].World
	}
	if looked > 0 {
		h.log.Debug("looked at home pool worlds", "pool", h.cfg.HomePool, "node", h.cfg.Node, "worlds", looked)
	}
}

// firstLook makes the first look at a world with head, a head this
// generation read (the WorldList page): the cheapest look there is — no
// read of its own, no mirror replay (the mirror is built on Acquire). It
// reports false, and does nothing, if the world's holder has looked
// already: observing a second, older head could drop or adopt an epoch
// outside the world's loop.
func (h *Host) firstLook(head *driver.World) (bool, error) {
	s, err := h.slot(head.World)
	if err != nil {
		return false, err
	}
	if err := s.mu.lock(context.Background(), h.cfg.Runtime); err != nil {
		return false, err
	}
	defer s.mu.unlock()
	if h.hasLooked(head.World) { // looked at (Prepare, Acquire, Create) while this call waited
		return false, nil
	}
	// The holder has not looked: this is its first observation, which
	// only fixes the horizon (observe never adopts the epoch of its first
	// head), so it neither adopts nor drops anything.
	s.holder.Observe(head)
	h.markLooked(head.World)
	return true, nil
}
