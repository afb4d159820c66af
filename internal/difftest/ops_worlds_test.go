package difftest

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// The world ops: creation, appends and every lease change.

func decodeWorldCreate(_ context.Context, in *input, _ *side) step {
	p := driver.WorldCreateParams{World: from(in, worlds), Home: from(in, holders), Term: from(in, durations)}
	return step{desc: fmt.Sprintf("create %+v", p), run: func(ctx context.Context, sd *side) string {
		q := p
		w, err := sd.d.WorldCreate(ctx, &q)
		return sd.result(world(w), err)
	}}
}

func decodeAppend(ctx context.Context, in *input, ref *side) step {
	w := from(in, worlds)
	head := headFor(ctx, ref, w)
	n := 1 + in.pick(3)
	reqs := make([]journal.AppendRequest, n)
	desc := fmt.Sprintf("append %q", w)
	for i := range reqs {
		holder := head.Holder
		if in.pick(3) == 0 || holder == "" {
			holder = from(in, holders)
		}
		seen := head.GrantedAt
		if in.pick(2) == 0 {
			seen = head.Position
		}
		reqs[i] = journal.AppendRequest{Holder: holder, Epoch: near(in, head.Epoch), SeenPosition: near(in, seen),
			Kind: journal.Kind(from(in, kinds)), Key: from(in, uniqueKeys), Payload: from(in, payloads)}
		r := reqs[i]
		desc += fmt.Sprintf(" {%q e=%d seen=%d %q key=%q %s}", r.Holder, r.Epoch, r.SeenPosition, r.Kind, r.Key, bs(r.Payload))
	}
	return step{desc: desc, run: func(ctx context.Context, sd *side) string {
		// Each store gets its own copy: a driver must not change the
		// caller's requests, but if one did, the other must not see it.
		cp := make([]journal.AppendRequest, len(reqs))
		copy(cp, reqs)
		out, err := sd.d.JournalAppend(ctx, &driver.JournalAppendParams{World: w, Requests: cp})
		return sd.result(appendOutcomes(out, sd), err)
	}}
}

// change applies one lease change planned by plan on the locked head.
func change(w, op string, plan func(s journal.State, now time.Time) (journal.Plan, error)) func(context.Context, *side) string {
	return func(ctx context.Context, sd *side) string {
		got, err := sd.d.LeaseChange(ctx, &driver.LeaseChangeParams{World: w, Op: op,
			Plan: func(h *driver.World, now time.Time) (journal.Plan, error) { return plan(h.State, now) }})
		return sd.result(world(got), err)
	}
}

// leaseArgs chooses a world, a holder (the current one most often) and an
// epoch around the current one.
func leaseArgs(ctx context.Context, in *input, ref *side) (w, holder string, epoch int64, term time.Duration) {
	w = from(in, worlds)
	head := headFor(ctx, ref, w)
	holder = head.Holder
	if in.pick(3) == 0 || holder == "" {
		holder = from(in, holders)
	}
	return w, holder, near(in, head.Epoch), from(in, durations)
}

func decodeGrant(ctx context.Context, in *input, ref *side) step {
	w, holder, epoch, term := leaseArgs(ctx, in, ref)
	return step{desc: fmt.Sprintf("grant %q to %q epoch=%d term=%s", w, holder, epoch, term),
		run: change(w, "grant", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanGrant(s, now, holder, epoch, term)
		})}
}

func decodeLeaseRenew(ctx context.Context, in *input, ref *side) step {
	w, holder, epoch, term := leaseArgs(ctx, in, ref)
	return step{desc: fmt.Sprintf("lease renew %q by %q epoch=%d term=%s", w, holder, epoch, term),
		run: change(w, "renew", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRenew(s, now, holder, epoch, term)
		})}
}

func decodeHandoff(ctx context.Context, in *input, ref *side) step {
	w, holder, epoch, term := leaseArgs(ctx, in, ref)
	to := from(in, holders)
	return step{desc: fmt.Sprintf("handoff %q from %q to %q epoch=%d term=%s", w, holder, to, epoch, term),
		run: change(w, "handoff", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanHandoff(s, now, holder, to, epoch, term)
		})}
}

func decodeRevoke(ctx context.Context, in *input, ref *side) step {
	w, _, epoch, _ := leaseArgs(ctx, in, ref)
	reason := from(in, reasons)
	return step{desc: fmt.Sprintf("revoke %q epoch=%d reason=%s", w, epoch, bs([]byte(reason))),
		run: change(w, "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRevoke(s, now, epoch, reason)
		})}
}

// decodeSweep is what world.Sweeper does for one world: the expiry scan,
// then the sweep of the world through LeaseChange (a no-op plan when its
// lease is live).
func decodeSweep(_ context.Context, in *input, _ *side) step {
	w := from(in, worlds)
	limit := from(in, limits)
	return step{desc: fmt.Sprintf("sweep %q (scan limit=%d)", w, limit), run: func(ctx context.Context, sd *side) string {
		scan, err := sd.d.LeaseScanExpired(ctx, &driver.LeaseScanParams{Limit: limit})
		out := "scan " + sd.result(list(scan, expired), err)
		got, err := sd.d.LeaseChange(ctx, &driver.LeaseChangeParams{World: w, Op: "sweep",
			Plan: func(h *driver.World, now time.Time) (journal.Plan, error) {
				p, _ := journal.PlanSweep(h.State, now, h.Home, h.DefaultTerm)
				return p, nil
			}})
		return out + "; sweep " + sd.result(world(got), err)
	}}
}

func expired(e driver.ExpiredWorld) string { return fmt.Sprintf("%s@%s", e.World, at(e.ExpiresAt)) }
