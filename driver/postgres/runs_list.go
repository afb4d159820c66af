package postgres

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

// RunList implements driver.RunStore. It is a read: the general pool. The
// filters are parameters either way (” matches every queue or state);
// the primary key orders and bounds the page.
func (d *store) RunList(ctx context.Context, p *driver.RunListParams) ([]*driver.Run, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing runs: %w", err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT `+runColumns+` FROM runs
		WHERE id > $1 AND ($2 = '' OR queue = $2) AND ($3 = '' OR state = $3)
		ORDER BY id LIMIT $4`, p.AfterID, p.Queue, string(p.State), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing runs: %w", withCtx(ctx, err))
	}
	rs, err := scanRuns(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing runs: %w", withCtx(ctx, err))
	}
	return rs, nil
}
