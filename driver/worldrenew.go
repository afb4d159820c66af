package driver

import (
	"context"
	"time"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// WorldRenewer is the world keeper's drain (SPEC §2, one drain per process
// per T_drain for all held worlds; docs/design/fencing.md "World renewals"):
// one call confirms that a holder still holds a set of worlds and extends
// those that need it.
type WorldRenewer interface {
	// WorldRenewMany confirms, for each world of p, that p.Holder holds
	// its epoch, live on the store clock (journal.CheckRenew), and for
	// those marked Extend journals lease.renewed to store now + Term
	// (journal.PlanRenew) — all extensions in one transaction, the
	// confirmations read in it or beside it. The answer has one outcome
	// per world, in order; one world's refusal does not fail the others.
	// Nothing is journaled for a refusal.
	WorldRenewMany(ctx context.Context, p *WorldRenewManyParams) ([]WorldRenewOutcome, error)
}

// MaxWorldRenewBatch bounds the worlds of one WorldRenewMany.
const MaxWorldRenewBatch = 10000

// WorldRenewManyParams is one drain of one holder's worlds.
type WorldRenewManyParams struct {
	Holder string
	Worlds []WorldRenewal
}

// WorldRenewal is one world of a drain.
type WorldRenewal struct {
	World  string
	Epoch  int64
	Extend bool          // journal lease.renewed; false: only confirm
	Term   time.Duration // the term of an extension
}

// WorldRenewOutcome is one world's answer: its head after the drain, or
// the refusal (*journal.RefusedError: the lease is not the holder's any
// more) or ErrNotFound.
type WorldRenewOutcome struct {
	World *World
	Err   error
}

// Class implements lease.Classed: a renewal keeps a lease.
func (*WorldRenewManyParams) Class() lease.Durability { return lease.SyncCritical }

// Validate checks the holder and each world once: ids, positive epochs,
// the term of each extension, no world twice, at most MaxWorldRenewBatch.
func (p *WorldRenewManyParams) Validate() error {
	if err := journal.ValidateID("holder", p.Holder); err != nil {
		return err
	}
	if len(p.Worlds) > MaxWorldRenewBatch {
		return &journal.InputError{Field: "worlds", Problem: "more than MaxWorldRenewBatch in one drain"}
	}
	seen := make(map[string]bool, len(p.Worlds))
	for i := range p.Worlds {
		r := &p.Worlds[i]
		if err := journal.ValidateID("world", r.World); err != nil {
			return err
		}
		if seen[r.World] {
			return &journal.InputError{Field: "worlds", Problem: "world " + r.World + " twice in one drain"}
		}
		seen[r.World] = true
		if r.Epoch <= 0 {
			return &journal.InputError{Field: "epoch", Problem: "not a positive epoch"}
		}
		if r.Extend {
			if err := journal.ValidateTerm(r.Term); err != nil {
				return err
			}
		}
	}
	return nil
}

// RenewOutcome is the outcome of one world of a drain, planned against its
// head at store time now: the extension's plan (empty when only
// confirming), or the refusal. Both drivers use it, so they answer alike.
func RenewOutcome(holder string, r *WorldRenewal, w *World, now time.Time) (journal.Plan, error) {
	if !r.Extend {
		if reason := journal.CheckRenew(w.State, now, holder, r.Epoch); reason != "" {
			return journal.Plan{}, &journal.RefusedError{Op: "renew", World: r.World, Holder: holder, Epoch: r.Epoch,
				Reason: reason, CurrentEpoch: w.Epoch, CurrentHolder: w.Holder}
		}
		return journal.Plan{}, nil
	}
	return journal.PlanRenew(w.State, now, holder, r.Epoch, r.Term)
}
