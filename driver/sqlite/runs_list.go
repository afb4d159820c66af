package sqlite

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

// RunList implements driver.RunStore, on the read pool. The queue and
// state filters are bound as parameters either way (” matches every
// queue or state), so the statement is one plan; the primary key orders
// and bounds the page. The owner and unique-key filters are added only
// when set, with the literal predicate of the partial index that serves
// each (state = 'running': a run's owner is ” unless it runs;
// uniqueHeldSQL, runs_unique_key's), so they read the running runs or one key's runs,
// never the whole table.
func (d *store) RunList(ctx context.Context, p *driver.RunListParams) ([]*driver.Run, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := d.r.QueryContext(ctx, runListQuery(p), runListArgs(p, limit)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing runs: %w", err)
	}
	rs, err := scanRuns(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing runs: %w", err)
	}
	return rs, nil
}

// runListQuery is RunList's statement. SQLite's planner, without
// statistics, prefers walking the rowids in order (no sort) even when the
// filter keeps a handful of 100,000 rows, so the owner and key filters
// name their index: the running runs through runs_expiry (the partial
// index of running runs) and a key's through runs_unique_key (so the
// key's runs found are those holding it now) — each a candidate set
// bounded by what runs now or by one key — and only then ordered by id.
// INDEXED BY fails the statement rather than scan if the index cannot
// serve it (TestRunListFiltersUseIndexes).
func runListQuery(p *driver.RunListParams) string {
	from := `runs`
	switch {
	case p.UniqueKey != "": // the more selective: one run per period bucket
		from = `runs INDEXED BY runs_unique_key`
	case p.Owner != "":
		from = `runs INDEXED BY runs_expiry`
	}
	q := `SELECT ` + runColumns + ` FROM ` + from + ` WHERE id > ? AND (? = '' OR queue = ?) AND (? = '' OR state = ?)`
	if p.Owner != "" {
		q += ` AND state = 'running' AND owner = ?`
	}
	if p.UniqueKey != "" {
		q += ` AND ` + uniqueHeldSQL + ` AND unique_key = ?`
	}
	return q + ` ORDER BY id LIMIT ?`
}

func runListArgs(p *driver.RunListParams, limit int) []any {
	args := []any{p.AfterID, p.Queue, p.Queue, string(p.State), string(p.State)}
	if p.Owner != "" {
		args = append(args, p.Owner)
	}
	if p.UniqueKey != "" {
		args = append(args, p.UniqueKey)
	}
	return append(args, limit)
}
