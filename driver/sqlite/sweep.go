package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// LeaseSweepExpired implements driver.Driver. The scan is only a hint: each
// world is then swept in its own change, whose plan re-checks expiry on the
// locked head and whose conditional write re-asserts it, so a world another
// sweeper got to first is skipped.
func (d *store) LeaseSweepExpired(ctx context.Context, p *driver.LeaseSweepParams) (*driver.SweepResult, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := d.r.QueryContext(ctx, `SELECT id FROM worlds WHERE holder <> '' AND expires_at <= ?
		ORDER BY expires_at LIMIT ?`, d.clock.Now().UnixMicro(), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: sweep scan: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: sweep scan: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: sweep scan: %w", err)
	}
	res := &driver.SweepResult{Candidates: len(ids)}
	var errs []error
	for _, id := range ids {
		var sw *driver.SweptWorld
		_, err := d.change(ctx, id, "sweep", func(w *driver.World, now time.Time, _ func(string) bool) (journal.Plan, error) {
			plan, ok := journal.PlanSweep(w.State, now, w.Home, w.DefaultTerm)
			if ok {
				sw = &driver.SweptWorld{World: id, Revoked: plan.Entries[0], Granted: plan.Entries[1],
					ExpiredAt: w.ExpiresAt, StoreTimeAt: plan.Cond.Now}
			}
			return plan, nil
		})
		if err != nil { // one world's failure must not hold up the others
			errs = append(errs, fmt.Errorf("%s: sweeping %q: %w", "sqlite", id, err))
			continue
		}
		if sw != nil {
			res.Swept = append(res.Swept, *sw)
		}
	}
	return res, errors.Join(errs...)
}
