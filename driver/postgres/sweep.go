package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// LeaseScanExpired implements driver.Driver: a read without locks on the
// general pool (the worlds_expiry partial index), earliest expiry first.
// The sweep itself is world.SweepExpired, through LeaseChange, whose
// SELECT … FOR UPDATE waits for any other sweeper.
func (d *store) LeaseScanExpired(ctx context.Context, p *driver.LeaseScanParams) ([]driver.ExpiredWorld, error) {
	limit := p.Limit // > 0: defaulted by driver.Validating
	var afterAt *time.Time
	afterID := ""
	if p.After != nil {
		afterAt, afterID = &p.After.ExpiresAt, p.After.World
	}
	fail := func(err error) error { return fmt.Errorf("postgres: sweep scan: %w", withCtx(ctx, err)) }
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT id, expires_at FROM worlds
		WHERE holder <> '' AND expires_at <= coalesce($1::timestamptz, clock_timestamp())
		  AND ($2::timestamptz IS NULL OR (expires_at, id) > ($2::timestamptz, $3::text))
		ORDER BY expires_at, id LIMIT $4`, d.fakeNow(), afterAt, afterID, limit)
	if err != nil {
		return nil, fail(err)
	}
	defer rows.Close()
	out, err := driver.CollectRows(rows, func() (driver.ExpiredWorld, error) {
		var w driver.ExpiredWorld
		err := rows.Scan(&w.World, &w.ExpiresAt)
		w.ExpiresAt = w.ExpiresAt.UTC()
		return w, err
	})
	if err != nil {
		return nil, fail(err)
	}
	return out, nil
}
