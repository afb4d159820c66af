package host

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
)

// startHomePool joins Config.HomePool (if set) and starts the loop that
// renews the membership every T_renew with a term of T_lease and leaves
// the pool when the host stops. A renewal that fails is logged and tried
// again on the next beat; a host that cannot renew drops out of the pool
// when its membership expires, as a dead one does.
func (h *Host) startHomePool(ctx context.Context) error {
	if h.cfg.HomePool == "" {
		return nil
	}
	hs := h.cfg.Store.(driver.HomeStore) // checked by Config.withDefaults
	join := &driver.HomeJoinParams{Pool: h.cfg.HomePool, Node: h.cfg.Node, Term: h.cfg.Timing.Lease}
	if _, err := hs.HomeJoin(ctx, join); err != nil {
		return fmt.Errorf("host %s: joining home pool %q: %w", h.cfg.Node, h.cfg.HomePool, err)
	}
	h.life.Go("home pool", func() {
		rt.Every(h.cfg.Runtime, h.clock, ctx, h.cfg.Timing.Renew, func() {
			if _, err := hs.HomeJoin(ctx, join); err != nil && ctx.Err() == nil {
				h.log.Warn("renewing home pool membership failed; retrying next period",
					"pool", h.cfg.HomePool, "node", h.cfg.Node, "err", err)
			}
		})
		// Stopped (or the start context ended): leave, bounded by Stop's
		// context; if that fails the membership simply expires.
		if err := hs.HomeLeave(h.life.StopContext(), &driver.HomeLeaveParams{Pool: h.cfg.HomePool, Node: h.cfg.Node}); err != nil {
			h.log.Info("leaving home pool failed; the membership will expire", "pool", h.cfg.HomePool, "node", h.cfg.Node, "err", err)
		}
	})
	return nil
}
