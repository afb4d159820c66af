package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// runInsertSQL inserts one available run. A taken unique key makes it
// insert nothing and return no row (the conflict target names the partial
// unique index, so runs without a key never conflict); any other constraint
// failure is still an error.
const runInsertSQL = `INSERT INTO runs (queue, payload, priority, state, max_attempts, scheduled_at, unique_key, created_at)
VALUES (?, ?, ?, 'available', ?, ?, ?, ?)
ON CONFLICT (unique_key) WHERE unique_key <> '' DO NOTHING
RETURNING ` + runColumns

// RunEnqueue implements driver.RunStore. The batch is one BEGIN IMMEDIATE
// transaction (one fsync). Two enqueues racing for one unique key
// serialize on the writer lock, so the second's INSERT sees the first's
// row, inserts nothing, and reads that row back as Existing.
func (d *Driver) RunEnqueue(ctx context.Context, p *driver.RunEnqueueParams) ([]driver.RunEnqueued, error) {
	// Validate copies: ValidateEnqueue fills defaults and normalizes the
	// payload in place, and the caller's slice is not ours to change.
	es := make([]runs.Enqueue, len(p.Runs))
	for i := range p.Runs {
		es[i] = p.Runs[i]
		if err := runs.ValidateEnqueue(&es[i]); err != nil {
			return nil, err
		}
	}
	if len(es) == 0 {
		return nil, nil
	}
	st, err := d.runPrepared(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: enqueueing runs: begin: %w", err)
	}
	defer tx.Rollback()
	insert, byKey := tx.StmtContext(ctx, st.insert), tx.StmtContext(ctx, st.selectByKey)
	now := journal.NormalizeTime(d.clock.Now()) // read under the writer lock
	out := make([]driver.RunEnqueued, len(es))
	for i := range es {
		e := &es[i]
		r, err := scanRun(insert.QueryRowContext(ctx, e.Queue, e.Payload, e.Priority, e.MaxAttempts,
			now.Add(e.Delay).UnixMicro(), e.UniqueKey, now.UnixMicro()))
		if errors.Is(err, sql.ErrNoRows) && e.UniqueKey != "" {
			out[i].Existing = true
			r, err = scanRun(byKey.QueryRowContext(ctx, e.UniqueKey))
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: enqueueing run %d of %d on %q: %w", i+1, len(es), e.Queue, err)
		}
		out[i].Run = r
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: enqueueing runs: commit: %w", err)
	}
	return out, nil
}
