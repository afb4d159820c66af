package sqlite

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

// RunList implements driver.RunStore, on the read pool. The filters are
// bound as parameters either way (” matches every queue or state), so
// the statement is one plan; the primary key orders and bounds the page.
func (d *store) RunList(ctx context.Context, p *driver.RunListParams) ([]*driver.Run, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := d.r.QueryContext(ctx, `SELECT `+runColumns+` FROM runs
		WHERE id > ? AND (? = '' OR queue = ?) AND (? = '' OR state = ?)
		ORDER BY id LIMIT ?`, p.AfterID, p.Queue, p.Queue, string(p.State), string(p.State), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing runs: %w", err)
	}
	rs, err := scanRuns(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing runs: %w", err)
	}
	return rs, nil
}
