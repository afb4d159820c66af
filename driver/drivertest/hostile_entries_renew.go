package drivertest

import (
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// The world keeper's drain (WorldRenewMany): the holder, the world, the
// epoch and the term of an extension.

func renewEntries() []hostileEntry {
	renew := func(x *hx, holder, world string, epoch int64, t time.Duration) error {
		out, err := x.d.WorldRenewMany(x.ctx, &driver.WorldRenewManyParams{Holder: holder,
			Worlds: []driver.WorldRenewal{{World: world, Epoch: epoch, Extend: true, Term: t}}})
		if err != nil {
			return err
		}
		return out[0].Err
	}
	// extended: the world's head shows the extension by holder.
	extended := func(x *hx, world, holder string, t time.Duration) func() error {
		return func() error {
			w := x.get(world)
			if w.Position != 2 || w.Holder != holder {
				return fmt.Errorf("head at %d held by %q, want a renewal at 2 by %q", w.Position, w.Holder, holder)
			}
			if w.Term != wholeMS(t) {
				return fmt.Errorf("term %s, want %s", w.Term, wholeMS(t))
			}
			return nil
		}
	}
	return []hostileEntry{
		str("WorldRenewMany.holder", func(x *hx, v string) hostileCall {
			x.createFor(v)
			return hostileCall{func() error { return renew(x, v, x.world(), 1, term) }, extended(x, x.world(), v, term)}
		}),
		str("WorldRenewMany.world", func(x *hx, v string) hostileCall {
			_ = ignore(x.d.WorldCreate(x.ctx, &driver.WorldCreateParams{World: v, Home: "h", Term: term}))
			return hostileCall{func() error { return renew(x, "h", v, 1, term) }, extended(x, v, "h", term)}
		}),
		num("WorldRenewMany.epoch", func(x *hx, v int64) hostileCall {
			x.create(x.world(), "h")
			return hostileCall{func() error { return renew(x, "h", x.world(), v, term) }, extended(x, x.world(), "h", term)}
		}),
		dur("WorldRenewMany.term", func(x *hx, v time.Duration) hostileCall {
			x.create(x.world(), "h")
			return hostileCall{func() error { return renew(x, "h", x.world(), 1, v) }, extended(x, x.world(), "h", v)}
		}),
	}
}
