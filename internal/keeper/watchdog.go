package keeper

import (
	"context"
	"time"

	"github.com/leasehold/leasehold/internal/rt"
)

// WatchOnce is one evaluation of the self-stop rule for every live entry:
// a holder whose durable lag reached D_stop is stopped (its context
// cancelled with a self-stop *LostError), so it dispatches nothing more.
// In dark mode the decision is also computed from the drain's evidence
// and a difference counted.
func (k *Keeper) WatchOnce() {
	mode := k.Mode()
	now := k.now()
	k.tickClock(now)
	t := k.timing()
	for _, e := range k.live(nil) {
		lag := Lag(e.sent(mode), now)
		stop := lag >= t.Stop
		if mode == ModeDark && !e.shadowLost.Load() &&
			MustStop(t, time.Duration(e.drainSent.Load()), now) != stop {
			k.stats.darkStopDiffs.Add(1)
		}
		if stop && e.giveUp(&LostError{Ref: e.ref, SelfStop: true, Lag: lag}, &k.stats.selfStops) {
			k.cfg.Logger.Warn("self-stop: durable lag reached D_stop", "kind", k.cfg.Kind,
				"id", e.ref.ID, "fence", e.ref.Fence, "lag", lag, "d_stop", t.Stop, "clock_cut", k.ClockCut())
		}
	}
}

// watchLoop runs WatchOnce every WatchEvery, on a fixed beat.
func (k *Keeper) watchLoop(ctx context.Context) {
	rt.Every(k.rt, k.clock, ctx, k.cfg.WatchEvery, k.WatchOnce)
}
