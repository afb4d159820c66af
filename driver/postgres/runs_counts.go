package postgres

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// RunCounts implements driver.RunLister. It is a read: the general pool,
// one grouped scan of the runs table.
func (d *store) RunCounts(ctx context.Context) ([]driver.RunCount, error) {
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: counting runs: %w", err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT queue, state, count(*) FROM runs GROUP BY queue, state ORDER BY queue, state`)
	if err != nil {
		return nil, fmt.Errorf("postgres: counting runs: %w", withCtx(ctx, err))
	}
	defer rows.Close()
	var out []driver.RunCount
	for rows.Next() {
		var c driver.RunCount
		var state string
		if err := rows.Scan(&c.Queue, &state, &c.N); err != nil {
			return nil, fmt.Errorf("postgres: counting runs: %w", withCtx(ctx, err))
		}
		c.State = runs.State(state)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: counting runs: %w", withCtx(ctx, err))
	}
	return out, nil
}
