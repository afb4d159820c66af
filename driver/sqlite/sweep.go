package sqlite

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

// LeaseScanExpired implements driver.Driver, on the read pool (the
// worlds_expiry partial index). The sweep itself is world.SweepExpired,
// through LeaseChange.
func (d *store) LeaseScanExpired(ctx context.Context, p *driver.LeaseScanParams) ([]driver.ExpiredWorld, error) {
	limit := p.Limit // > 0: defaulted by driver.Validating
	// A cursor below every expiry when none is given: (expiry, id) > (min, "").
	afterUs, afterID := int64(-1<<63), ""
	if p.After != nil {
		afterUs, afterID = p.After.ExpiresAt.UnixMicro(), p.After.World
	}
	st, err := d.readPrepared(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := st.expiredWorlds.QueryContext(ctx, d.clock.Now().UnixMicro(), afterUs, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: sweep scan: %w", err)
	}
	defer rows.Close()
	out, err := driver.CollectRows(rows, func() (driver.ExpiredWorld, error) {
		var w driver.ExpiredWorld
		var us int64
		err := rows.Scan(&w.World, &us)
		w.ExpiresAt = fromMicros(us)
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: sweep scan: %w", err)
	}
	return out, nil
}
