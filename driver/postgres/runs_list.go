package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/leasehold/leasehold/driver"
)

// RunList implements driver.RunStore. It is a read: the general pool. The
// queue and state filters are parameters either way (” matches every
// queue or state); the primary key orders and bounds the page. The owner
// and unique-key filters are added only when set, each with the literal
// predicate of the partial index that serves it (runs_expiry's state =
// 'running' AND expires_at IS NOT NULL: a run's owner is ” unless it
// runs; uniqueHeldSQL, runs_unique_key's), so the planner can
// prove the index applies even in a generic plan, where the parameter's
// value is unknown: they read the running runs or one key's runs, never
// the whole table (runs_list_explain_test.go).
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
	q, args := runListQuery(p, limit)
	rows, err := conn.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing runs: %w", withCtx(ctx, err))
	}
	rs, err := scanRuns(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing runs: %w", withCtx(ctx, err))
	}
	return rs, nil
}

// runListQuery is RunList's statement and arguments: one of four texts,
// so each keeps its own cached plan.
func runListQuery(p *driver.RunListParams, limit int) (string, []any) {
	args := []any{p.AfterID, p.Queue, string(p.State)}
	where := `id > $1 AND ($2 = '' OR queue = $2) AND ($3 = '' OR state = $3)`
	if p.Owner != "" {
		args = append(args, p.Owner)
		where += ` AND state = 'running' AND expires_at IS NOT NULL AND owner = $` + strconv.Itoa(len(args))
	}
	if p.UniqueKey != "" {
		args = append(args, p.UniqueKey)
		where += ` AND ` + uniqueHeldSQL + ` AND unique_key = $` + strconv.Itoa(len(args))
	}
	args = append(args, limit)
	return `SELECT ` + runColumns + ` FROM runs WHERE ` + where + ` ORDER BY id LIMIT $` + strconv.Itoa(len(args)), args
}
