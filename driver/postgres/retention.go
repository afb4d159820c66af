package postgres

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

// deleteFinished is one cleaner batch in one statement: c picks runs of
// one final state that finished before the cutoff (the runs_finished
// index, oldest first) and have no effect intent that was never committed
// — an unresolved uncertain effect keeps its run, whatever its age — and
// locks them FOR UPDATE SKIP LOCKED, so cleaners on every replica take
// disjoint batches and never wait on one another. The three deletes share
// the statement's snapshot; the foreign key from run_effects is checked
// at the statement's end, after its rows are gone too. A finished run
// never takes new effects or events (both are fenced on state =
// 'running'), so nothing can be added under a picked run meanwhile.
const deleteFinished = `WITH ` + storeNowSQL + `, c AS (
    SELECT r.id FROM runs r, t
    WHERE r.state = $2 AND r.finished_at IS NOT NULL AND r.finished_at < t.now - $3::interval
      AND NOT EXISTS (SELECT 1 FROM run_effects e WHERE e.run_id = r.id AND NOT e.committed)
    ORDER BY r.finished_at, r.id
    LIMIT $4
    FOR UPDATE OF r SKIP LOCKED
),
ev AS (DELETE FROM run_events v USING c WHERE v.run_id = c.id RETURNING 1),
ef AS (DELETE FROM run_effects e USING c WHERE e.run_id = c.id RETURNING 1),
ru AS (DELETE FROM runs r USING c WHERE r.id = c.id RETURNING 1)
SELECT (SELECT count(*) FROM ru), (SELECT count(*) FROM ef), (SELECT count(*) FROM ev)`

// RunDeleteFinished implements driver.RunRetainer in one statement (its
// own short transaction), on the general pool: housekeeping never queues
// ahead of lease writes.
func (d *store) RunDeleteFinished(ctx context.Context, p *driver.RunDeleteFinishedParams) (*driver.RunDeleteFinishedResult, error) {
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fmt.Errorf("postgres: deleting finished %s runs: %w", p.State, withCtx(ctx, err))
	}
	defer conn.Release()
	out := &driver.RunDeleteFinishedResult{}
	if err := conn.QueryRow(ctx, deleteFinished, d.fakeNow(), string(p.State), p.OlderThan, p.Limit).
		Scan(&out.Runs, &out.Effects, &out.Events); err != nil {
		return nil, fmt.Errorf("postgres: deleting finished %s runs: %w", p.State, withCtx(ctx, err))
	}
	return out, nil
}
