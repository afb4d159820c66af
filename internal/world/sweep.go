package world

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// SweepReport is what one SweepExpired did.
type SweepReport struct {
	// Candidates is how many expired worlds the scans found, over all
	// batches (a world another sweeper took counts, unswept).
	Candidates int
	// Swept are the worlds this call revoked and re-granted to home.
	Swept []SweptWorld
	// Skipped are the worlds whose sweep failed or cannot be planned, in
	// scan order; each one's error is joined into SweepExpired's error.
	Skipped []string
}

// SweptWorld is a world the sweep revoked and re-granted.
type SweptWorld struct {
	World       string
	Revoked     journal.Entry
	Granted     journal.Entry
	ExpiredAt   time.Time // the expiry the sweep acted on
	StoreTimeAt time.Time // the store time of the sweep's entries
}

// ErrUnsweepable marks a world whose lease is held and expired but whose
// sweep cannot be planned: its home or default term cannot be granted
// (e.g. a term below the journal's resolution). It is reported and skipped;
// an operator revokes it. It unwraps to lease.ErrInvalid.
var ErrUnsweepable = fmt.Errorf("expired lease cannot be re-granted to its home: %w", lease.ErrInvalid)

// SweepExpired is the expiry sweep (SPEC §4 "Expiry"): it scans the held,
// expired leases in bounded batches of limit (<= 0 means 100), earliest
// expiry first, and sweeps each world in its own conditional change —
// lease.revoked{reason: expiry} then lease.granted{holder: home, epoch+1},
// through d.LeaseChange. Safe when several processes sweep at once: the
// planner re-checks expiry on the locked head and the conditional write
// re-asserts it, so a world is swept by exactly one of them and the others
// re-plan it to nothing.
//
// The scans walk forward on an (expiry, id) cursor, so every candidate is
// visited once per call: a world whose sweep fails or cannot be planned is
// skipped and reported (its error joined), never rescanned in this call, so
// it cannot hold up the worlds behind it (issue 17, defect 15); it is tried
// again next call. SweepExpired returns when a scan comes back short of the
// limit, when a scan fails, or when ctx ends.
func SweepExpired(ctx context.Context, d driver.Driver, limit int) (*SweepReport, error) {
	if limit <= 0 {
		limit = driver.DefaultLeaseScanBatch
	}
	rep := &SweepReport{}
	var errs []error
	var after *driver.ExpiredWorld
	for ctx.Err() == nil {
		batch, err := d.LeaseScanExpired(ctx, &driver.LeaseScanParams{Limit: limit, After: after})
		if err != nil {
			errs = append(errs, err)
			break
		}
		rep.Candidates += len(batch)
		for _, c := range batch {
			if ctx.Err() != nil { // the worlds left are tried next call
				errs = append(errs, ctx.Err())
				break
			}
			sw, err := sweepWorld(ctx, d, c.World)
			if err != nil { // one world's failure must not hold up the others
				rep.Skipped = append(rep.Skipped, c.World)
				errs = append(errs, fmt.Errorf("sweeping %q: %w", c.World, err))
				continue
			}
			if sw != nil {
				rep.Swept = append(rep.Swept, *sw)
			}
		}
		if len(batch) < limit {
			break
		}
		after = &batch[len(batch)-1]
	}
	return rep, errors.Join(errs...)
}

// sweepWorld sweeps one world in one conditional change; nil, nil when
// there is nothing to sweep any more (another sweeper got there first, or a
// grant came in between the scan and the lock).
func sweepWorld(ctx context.Context, d driver.Driver, id string) (*SweptWorld, error) {
	var sw *SweptWorld
	_, err := d.LeaseChange(ctx, &driver.LeaseChangeParams{World: id, Op: "sweep",
		Plan: func(w *driver.World, now time.Time) (journal.Plan, error) {
			sw = nil // only the plan the driver commits may report a sweep
			plan, ok := journal.PlanSweep(w.State, now, w.Home, w.DefaultTerm)
			if ok {
				sw = &SweptWorld{World: id, Revoked: plan.Entries[0], Granted: plan.Entries[1],
					ExpiredAt: w.ExpiresAt, StoreTimeAt: plan.Cond.Now}
				return plan, nil
			}
			if w.Held() && w.Expired(journal.StoreNow(w.State, now)) {
				return journal.Plan{}, fmt.Errorf("world %q (home %q, default term %s): %w", id, w.Home, w.DefaultTerm, ErrUnsweepable)
			}
			return journal.Plan{}, nil
		}})
	if err != nil {
		return nil, err
	}
	return sw, nil
}
