package sim

import (
	"context"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// InvBelief: a holder sends an append only while the store agrees that it
// holds the lease — the epoch it appends under is current, held by it and
// unexpired on the store clock. The store would refuse the append anyway
// (the fence); this checks the holder's side of the protocol: that its
// belief in its runway (world.Holder.Runway, from the send of its last
// confirmed renewal) is true on the store (W4 of model/world.pml). It is
// checked at the send, on the loop, so no time passes between the holder's
// decision and the check.
const InvBelief = "world-belief"

// appendSent checks InvBelief as an append batch leaves its holder.
func (o *oracle) appendSent(p *proc, reqs []journal.AppendRequest) {
	if len(reqs) == 0 {
		return
	}
	w, err := o.s.store.WorldGet(context.Background(), &driver.WorldGetParams{World: worldID})
	if err != nil {
		panic(err)
	}
	r := reqs[0]
	now := journal.StoreNow(w.State, o.s.storeClock.Now())
	if w.Epoch != r.Epoch || w.Holder != r.Holder || w.Expired(now) {
		o.fail(InvBelief, "%s sends an append as %s under epoch %d believing it holds the lease, while the store has epoch %d held by %q, its expiry %v away at store time %v",
			p.owner, r.Holder, r.Epoch, w.Epoch, w.Holder, w.ExpiresAt.Sub(now), now.Sub(epoch))
	}
}
