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
// lease.revoked{reason: expiry} then lease.granted{holder: a live home
// replica, epoch+1}, through d.LeaseChange.
//
// The grantee is chosen by driver.HomeGrantee among the live replicas of
// the pool the world's Home names (d.HomeLive, read once per pool per
// call), never the holder whose lease expired; when the pool has no such
// replica (nobody joined it, or every one is dead) it is the Home name
// itself, as before home pools. Safe when several processes sweep at once: the
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
	pools := homePools{d: d, live: map[string][]driver.HomeReplica{}}
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
			sw, err := sweepWorld(ctx, d, &pools, c.World)
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

// homePools caches the live replicas of each home pool for one
// SweepExpired call.
type homePools struct {
	d    driver.Driver
	live map[string][]driver.HomeReplica
}

// needPool is the planner's answer when the world's home pool is not read
// yet in this call: sweepWorld reads it (outside the transaction) and plans
// again.
type needPool struct{ pool string }

func (n *needPool) Error() string { return fmt.Sprintf("home pool %q not read yet", n.pool) }

// sweepWorld sweeps one world in one conditional change; nil, nil when
// there is nothing to sweep any more (another sweeper got there first, or a
// grant came in between the scan and the lock).
func sweepWorld(ctx context.Context, d driver.Driver, pools *homePools, id string) (*SweptWorld, error) {
	for range 2 { // a world's home never changes: one read settles it
		sw, err := sweepWorldOnce(ctx, d, pools, id)
		var np *needPool
		if !errors.As(err, &np) {
			return sw, err
		}
		live, err := d.HomeLive(ctx, &driver.HomeLiveParams{Pool: np.pool})
		if err != nil {
			return nil, fmt.Errorf("reading the live replicas of home pool %q: %w", np.pool, err)
		}
		pools.live[np.pool] = live
	}
	return sweepWorldOnce(ctx, d, pools, id)
}

func sweepWorldOnce(ctx context.Context, d driver.Driver, pools *homePools, id string) (*SweptWorld, error) {
	var sw *SweptWorld
	_, err := d.LeaseChange(ctx, &driver.LeaseChangeParams{World: id, Op: "sweep",
		Plan: func(w *driver.World, now time.Time) (journal.Plan, error) {
			sw = nil // only the plan the driver commits may report a sweep
			expired := w.Held() && w.Expired(journal.StoreNow(w.State, now))
			grantee := w.Home
			if expired {
				live, ok := pools.live[w.Home]
				if !ok {
					return journal.Plan{}, &needPool{pool: w.Home}
				}
				if to, ok := driver.HomeGrantee(id, w.Holder, live); ok {
					grantee = to
				}
			}
			plan, ok := journal.PlanSweep(w.State, now, grantee, w.DefaultTerm)
			if ok {
				sw = &SweptWorld{World: id, Revoked: plan.Entries[0], Granted: plan.Entries[1],
					ExpiredAt: w.ExpiresAt, StoreTimeAt: plan.Cond.Now}
				return plan, nil
			}
			if expired {
				return journal.Plan{}, fmt.Errorf("world %q (home %q, grantee %q, default term %s): %w", id, w.Home, grantee, w.DefaultTerm, ErrUnsweepable)
			}
			return journal.Plan{}, nil
		}})
	if err != nil {
		return nil, err
	}
	return sw, nil
}
