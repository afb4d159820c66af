package keeper

import (
	"context"
	"errors"
	"time"

	"github.com/leasehold/leasehold/internal/bugs"
)

// Gate is the side-effect gate: it returns nil when the holder may start
// an effect that runs at most maxDur, having enough durably confirmed
// runway (min(runway, D_stop - lag) >= maxDur + margin). The happy path is
// a pure-local check: no store call, no allocation.
//
// Short of runway it tries one synchronous flush of this lease, bounded by
// the runway left; still short, it refuses with a *RunwayError
// (lease.ErrLeaseRunway) and stops the holder. A gone entry refuses with
// the reason it went (lease.ErrLeaseLost or the earlier refusal).
//
// In dark mode the decision is also computed from the drain's evidence and
// a difference is counted; the sync decision is the one enforced.
func (e *Entry) Gate(ctx context.Context, maxDur time.Duration) error {
	if bugs.SkipGate {
		return nil
	}
	if e.state.Load() != live {
		return e.Err()
	}
	k := e.k
	mode := k.Mode()
	now := k.now()
	bound := k.gateBound()
	pass := GatePassesBound(bound, k.t.Margin, e.sent(mode), now, maxDur)
	if mode == ModeDark && !e.shadowLost.Load() &&
		GatePassesBound(bound, k.t.Margin, time.Duration(e.drainSent.Load()), now, maxDur) != pass {
		k.stats.darkGateDiffs.Add(1)
	}
	if pass {
		e.gatePasses.Add(1)
		return nil
	}
	return e.gateSlow(ctx, maxDur, mode)
}

// gateSlow is the gate's short path: one synchronous flush, then refuse.
func (e *Entry) gateSlow(ctx context.Context, maxDur time.Duration, mode Mode) error {
	k := e.k
	if runway := Runway(k.timing(), e.sent(mode), k.now()); runway > 0 {
		fctx, cancel := k.withFlushTimeout(ctx, runway)
		sent := k.now()
		lost, err := k.cfg.Flusher.Flush(fctx, []Ref{e.ref})
		cancel()
		switch {
		case err == nil && len(lost) == 0:
			if bugs.RunwayFromAnswer {
				sent = k.now()
			}
			e.confirm(mode, sent)
		case err == nil:
			// The store did not renew it: the lease is gone for real,
			// whatever the mode.
			e.giveUp(&LostError{Ref: e.ref, Lag: Lag(e.sent(mode), k.now())}, &k.stats.lost)
			return e.Err()
		case errors.Is(err, context.Canceled) && ctx.Err() != nil:
			return ctx.Err() // the caller gave up; nothing decided
		}
		if GatePasses(k.timing(), e.sent(mode), k.now(), maxDur) {
			k.stats.gateFlushPass.Add(1)
			return nil
		}
	}
	k.stats.gateRefuse.Add(1)
	refusal := &RunwayError{Ref: e.ref, Needed: Needed(k.t, maxDur), Available: Available(k.timing(), e.sent(mode), k.now())}
	e.giveUp(refusal, nil) // counted above, before the cancel
	return e.Err()
}

// confirm records a confirmed write of this lease sent at sent, on the
// path mode m decides from.
func (e *Entry) confirm(m Mode, sent time.Duration) {
	if m == ModeWriteBehind {
		advance(&e.drainSent, sent)
	} else {
		advance(&e.syncSent, sent)
	}
}
