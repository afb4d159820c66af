package host

import (
	"context"
	"errors"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/journal"
)

// The world keeper (SPEC §2 for worlds; docs/design/fencing.md "World
// renewals"): one drain per host per T_drain for every world it holds —
// one driver.WorldRenewMany call — instead of one synchronous renewal per
// world per T_renew. Each drain confirms every held world's lease (a read)
// and extends, with one lease.renewed entry, only the worlds whose runway
// from their last extension has fallen below Config.ExtendBelow (or whose
// turn asked for more runway for an effect). So a steady world journals a
// renewal about every (T_lease − S) − ExtendBelow instead of every T_renew,
// and the durable lag the self-stop watches is the time since the last
// confirming drain.
//
// The keeper never touches a world's holder: the world's loop owns it. It
// posts each world's outcome to the loop (drainResult), which folds it
// (world.Holder.Confirmed) or lets the world go when the store refused.

// drainResult is one world's part of a drain.
type drainResult struct {
	sent     time.Time // read before the drain's request left
	extended bool
	w        *driver.World
	err      error // the drain failed (nothing confirmed), or the world's refusal
	refused  bool  // err is the store's answer for this world: the lease is not ours
}

// keeperView is what the keeper reads of a held world, under its lock.
func (hw *hosted) keeperView() (epoch int64, extendedAt time.Time, want bool) {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	return hw.keepEpoch, hw.extendedAt, hw.wantExtend
}

// post hands a drain's outcome to the world's loop.
func (hw *hosted) post(r drainResult) {
	hw.mu.Lock()
	hw.drained = append(hw.drained, r)
	if r.extended && r.err == nil {
		// The keeper's own record of the extension, so its next drain
		// judges from it whether or not the loop has folded this one yet.
		hw.wantExtend = false
		if r.sent.After(hw.extendedAt) {
			hw.extendedAt = r.sent
		}
	}
	hw.mu.Unlock()
	hw.sig.Notify()
}

// runKeeper drains every T_drain until the host stops.
func (h *Host) runKeeper(ctx context.Context, r driver.WorldRenewer) {
	for {
		if h.cfg.Runtime.Wait(ctx, nil, h.cfg.Timing.Drain) == rt.Done {
			return
		}
		h.drain(ctx, r)
	}
}

// drain is one drain of every held world.
func (h *Host) drain(ctx context.Context, r driver.WorldRenewer) {
	h.mu.Lock()
	held := make([]*hosted, 0, len(h.held))
	for _, hw := range h.held {
		held = append(held, hw)
	}
	h.mu.Unlock()
	t := h.cfg.Timing
	now := h.clock.Now()
	var (
		reqs []driver.WorldRenewal
		hws  []*hosted
	)
	for _, hw := range held {
		epoch, extendedAt, want := hw.keeperView()
		if epoch == 0 {
			continue
		}
		// The runway left from the last extension: (sent + T_lease − S) − now.
		left := extendedAt.Add(t.Lease - t.Skew).Sub(now)
		extend := want || left < h.cfg.ExtendBelow
		reqs = append(reqs, driver.WorldRenewal{World: hw.world, Epoch: epoch, Extend: extend, Term: t.Lease})
		hws = append(hws, hw)
	}
	if len(reqs) == 0 {
		return
	}
	for len(reqs) > 0 {
		n := min(len(reqs), driver.MaxWorldRenewBatch)
		h.drainBatch(ctx, r, reqs[:n], hws[:n])
		reqs, hws = reqs[n:], hws[n:]
	}
}

func (h *Host) drainBatch(ctx context.Context, r driver.WorldRenewer, reqs []driver.WorldRenewal, hws []*hosted) {
	sent := h.clock.Now()
	// A drain that cannot be answered within D_stop could not keep anyone
	// going: the worlds' loops stop themselves by then.
	dctx, cancel := h.cfg.Runtime.WithTimeout(ctx, h.cfg.Timing.Stop)
	out, err := r.WorldRenewMany(dctx, &driver.WorldRenewManyParams{Holder: h.cfg.Node, Worlds: reqs})
	cancel()
	h.drains.Add(1)
	for i, hw := range hws {
		res := drainResult{sent: sent, extended: reqs[i].Extend}
		switch {
		case err != nil:
			res.err = err
		case out[i].Err != nil:
			var re *journal.RefusedError
			res.err, res.w = out[i].Err, out[i].World
			res.refused = errors.As(out[i].Err, &re) || errors.Is(out[i].Err, driver.ErrNotFound)
		default:
			res.w = out[i].World
			if reqs[i].Extend {
				h.extensions.Add(1)
			}
		}
		hw.post(res)
	}
}

// applyDrains folds the drains posted since the last call. false: the
// store refused the lease (it is not this host's any more) and the world
// was let go.
func (hw *hosted) applyDrains(ctx context.Context) bool {
	hw.mu.Lock()
	rs := hw.drained
	hw.drained = nil
	hw.mu.Unlock()
	for _, r := range rs {
		switch {
		case r.refused:
			hw.h.log.Warn("world keeper: the store refused the lease", "world", hw.world, "node", hw.h.cfg.Node, "err", r.err)
			w, _, _ := hw.holder.Read(ctx)
			nh := &NotHolderError{World: hw.world}
			if w != nil && w.State.Holder != hw.h.cfg.Node {
				nh.Holder, nh.Epoch = w.State.Holder, w.State.Epoch
			}
			if hw.holder.Epoch() == 0 || w == nil || w.State.Holder != hw.h.cfg.Node {
				hw.release(nh)
				return false
			}
		case r.err != nil:
			// Nothing confirmed: the durable lag grows, and the loop stops
			// the world at D_stop.
		default:
			if r.sent.After(hw.confirmedAt) {
				hw.confirmedAt = r.sent
			}
			if r.extended && hw.holder.Confirmed(r.sent, r.w) {
				hw.setExtended(r.sent)
			}
		}
	}
	return true
}

func (hw *hosted) setExtended(sent time.Time) {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	if sent.After(hw.extendedAt) {
		hw.extendedAt = sent
	}
	if sent.After(hw.renewedAt) {
		hw.renewedAt = sent
	}
}
