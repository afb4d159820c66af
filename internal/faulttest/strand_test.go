package faulttest

import (
	"fmt"
	"time"
)

// A strand is measured from the store's own timestamps: from the holder's
// last renewal (its last expiry, less T_lease, as the store wrote it) to
// the reclaim (the scheduled_at the reclaim wrote, the store's
// clock_timestamp()). SPEC §1 bounds it by T_lease + P + S. At a thirtieth
// of the default timing that leaves the reclaimer P + S = 533ms past the
// expiry, which a loaded 2-core machine can eat by itself: a store that
// starts the reclaim statement late, a test process not scheduled. Those
// delays are measured (never assumed) and the bound is checked net of them;
// on a healthy machine they measure a few milliseconds and the bound stands
// as written. The check logs both figures.

// environmentDelay is the part of a strand that is not the protocol's:
// what the machine and the store added, measured, not assumed.
type environmentDelay struct {
	// storeDown: the store was down (checkOptions.storeDown).
	storeDown []interval
	// storeLag: the reclaim statement had been sent, past the expiry, and
	// the store had not started it yet (its clock_timestamp() is the
	// reclaim time the strand ends at). The direct store's critical pool
	// serves the reclaimer alone, so no wait for a connection hides here:
	// this is the network, the server and the machine.
	storeLag interval
	// stalled: no goroutine of this process ran (the canary overslept)
	// between the expiry and the sending of that statement, so the
	// reclaimer, due every P, could not send it.
	stalled interval
}

// total is the time any of them covered, each instant counted once.
func (e environmentDelay) total() time.Duration {
	return unionLength(append([]interval{e.storeLag, e.stalled}, e.storeDown...)...)
}

func (e environmentDelay) String() string {
	var down time.Duration
	for _, i := range e.storeDown {
		down += i.length()
	}
	return fmt.Sprintf("not the protocol's: %v in all — store down %v, store lag %v, test process stalled %v",
		e.total().Round(time.Millisecond), down.Round(time.Millisecond), e.storeLag.length().Round(time.Millisecond),
		e.stalled.length().Round(time.Millisecond))
}

// environment measures the environment's share of rc's strand. A healthy
// machine measures ~0 of it; the strand bound then stands as SPEC §1
// writes it.
func (s *scenario) environment(rc reclaim, o checkOptions) environmentDelay {
	// Only what came after the expiry can have delayed the reclaim: an
	// outage before it costs the reclaimer nothing.
	var e environmentDelay
	reclaimed := rc.Run.ReclaimedAt
	for _, i := range o.storeDown {
		e.storeDown = append(e.storeDown, i.clip(rc.Expiry, reclaimed))
	}
	e.storeLag = interval{from: rc.Sent, to: reclaimed}.clip(rc.Expiry, reclaimed)
	if rc.Sent.After(rc.Expiry) {
		e.stalled = s.canary.stall(rc.Expiry, rc.Sent)
	}
	return e
}
