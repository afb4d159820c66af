package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// LeaseSweepExpired implements driver.Driver. The scan is only a hint, read
// without locks: each world is then swept in its own change on the reserved
// pool, whose SELECT … FOR UPDATE waits for any other sweeper, whose plan
// re-checks expiry on the locked head, and whose conditional write
// re-asserts it (expires_at <= now). A world another sweeper got to first
// re-plans to nothing and is skipped, so each expiry is swept exactly once.
func (d *store) LeaseSweepExpired(ctx context.Context, p *driver.LeaseSweepParams) (*driver.SweepResult, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	ids, err := d.sweepScan(ctx, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: sweep scan: %w", err)
	}
	res := &driver.SweepResult{Candidates: len(ids)}
	var errs []error
	for _, id := range ids {
		var sw *driver.SweptWorld
		_, err := d.change(ctx, changeReq{world: id, op: "sweep", critical: critical(p)},
			func(w *driver.World, now time.Time, _ func(string) bool) (journal.Plan, error) {
				plan, ok := journal.PlanSweep(w.State, now, w.Home, w.DefaultTerm)
				if ok {
					sw = &driver.SweptWorld{World: id, Revoked: plan.Entries[0], Granted: plan.Entries[1],
						ExpiredAt: w.ExpiresAt, StoreTimeAt: plan.Cond.Now}
				}
				return plan, nil
			})
		if err != nil { // one world's failure must not hold up the others
			errs = append(errs, fmt.Errorf("%s: sweeping %q: %w", "postgres", id, err))
			continue
		}
		if sw != nil {
			res.Swept = append(res.Swept, *sw)
		}
	}
	return res, errors.Join(errs...)
}

// sweepScan lists up to limit worlds whose lease is held and expired on the
// store clock, earliest expiry first (the worlds_expiry partial index).
func (d *store) sweepScan(ctx context.Context, limit int) ([]string, error) {
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT id FROM worlds
		WHERE holder <> '' AND expires_at <= coalesce($1::timestamptz, clock_timestamp())
		ORDER BY expires_at, id LIMIT $2`, d.fakeNow(), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
