package keeper

import (
	"time"

	"github.com/leasehold/leasehold/internal/clockwatch"
	"github.com/leasehold/leasehold/lease"
)

// ObserveStore feeds the runtime store-clock watch one round trip that
// learned the store's time: sent and recv are readings of the keeper's
// clock around the store call, store the time the store wrote by (a
// claim's or renewal's expires_at less T_lease, a drain's StoreNow). A
// zero store is ignored.
//
// When the store clock moved by more than S within one term, the keeper
// shortens the runway it trusts by the excess (Timing's S widened, D_stop
// capped so the holder still stops before the shortened runway ends) until
// the evidence from before the move is a term old; it logs both ends and
// counts them (leasehold_store_clock_*). See docs/design/fencing.md §6.
func (k *Keeper) ObserveStore(sent, recv, store time.Time) {
	if store.IsZero() {
		return
	}
	k.stats.clockProbes.Add(1)
	v := k.watch.Observe(clockwatch.Probe{Sent: k.offset(sent), Recv: k.offset(recv), Store: store})
	if v.Cleared {
		k.clockCleared()
	}
	if v.Raised {
		switch v.Kind {
		case clockwatch.KindStep:
			k.stats.clockSteps.Add(1)
		default:
			k.stats.clockDrifts.Add(1)
		}
	}
	old := time.Duration(k.clockExcess.Swap(int64(v.Excess)))
	// Logged when raised, and again only when the cut grew by a quarter of
	// S or more: later probes' round trips widen it a little each time,
	// and a log line per drain would bury the one that matters.
	if v.Raised || v.Excess >= old+k.t.Skew/4 {
		k.cfg.Logger.Warn("store clock moved beyond S within one term: runway shortened until it is back within bounds",
			"kind", k.cfg.Kind, "what", string(v.Kind), "moved", v.Moved, "bound", v.Bound, "s", k.t.Skew,
			"term", k.t.Lease, "runway_cut", v.Excess, "store_time", store, "rtt", recv.Sub(sent))
	}
}

// tickClock ends an alarm whose evidence aged out with no probe since
// (the watchdog calls it on its beat).
func (k *Keeper) tickClock(now time.Duration) {
	if k.watch.Tick(now) {
		k.clockExcess.Store(0)
		k.clockCleared()
	}
}

func (k *Keeper) clockCleared() {
	k.stats.clockClears.Add(1)
	k.cfg.Logger.Info("store clock back within bounds: runway no longer shortened", "kind", k.cfg.Kind, "s", k.t.Skew)
}

// ClockCut is how much the runway is shortened now, beyond S, because the
// store clock moved beyond S within the last term (0 normally).
func (k *Keeper) ClockCut() time.Duration { return time.Duration(k.clockExcess.Load()) }

// timing is the timing every decision uses: k.t, with S widened by the
// clock watch's cut while an alarm is in force, and D_stop capped at the
// widened T_lease − S so the self-stop still comes before the store may
// expire the lease. One atomic load on the gate's path, no allocation.
func (k *Keeper) timing() lease.Timing {
	t := k.t
	if x := time.Duration(k.clockExcess.Load()); x > 0 {
		t.Skew = lease.AddSat(t.Skew, x)
		t.Stop = min(t.Stop, max(lease.SubSat(t.Lease, t.Skew), 0))
	}
	return t
}

// gateBound is GateBound(k.timing()): the bound folded once in New while
// no store-clock cut is in force (one load of the cut on the gate's
// path), computed from the cut timing while one is.
func (k *Keeper) gateBound() time.Duration {
	if k.clockExcess.Load() == 0 {
		return k.bound
	}
	return GateBound(k.timing())
}
