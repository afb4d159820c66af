package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

var _ driver.RunStore = (*store)(nil)

// runColumns is the column list every run statement selects or returns, in
// scanRun's order.
const runColumns = `id, queue, payload, priority, state, attempt, max_attempts, fence, owner,
	scheduled_at, expires_at, unique_key, reason, result, created_at, finished_at, snoozes, reclaimed_at`

// scanRun reads one row of runColumns. NULL times become the zero time and
// a NULL (or empty) payload or result becomes nil.
func scanRun(r rowScanner) (*driver.Run, error) {
	var x driver.Run
	var state string
	var scheduled, created int64
	var expires, finished, reclaimed sql.NullInt64
	if err := r.Scan(&x.ID, &x.Queue, &x.Payload, &x.Priority, &state, &x.Attempt, &x.MaxAttempts, &x.Fence,
		&x.Owner, &scheduled, &expires, &x.UniqueKey, &x.Reason, &x.Result, &created, &finished, &x.Snoozes, &reclaimed); err != nil {
		return nil, err
	}
	x.State = runs.State(state)
	x.ScheduledAt = fromMicros(scheduled)
	x.CreatedAt = fromMicros(created)
	if expires.Valid {
		x.ExpiresAt = fromMicros(expires.Int64)
	}
	if finished.Valid {
		x.FinishedAt = fromMicros(finished.Int64)
	}
	if reclaimed.Valid {
		x.ReclaimedAt = fromMicros(reclaimed.Int64)
	}
	if len(x.Payload) == 0 {
		x.Payload = nil
	}
	if len(x.Result) == 0 {
		x.Result = nil
	}
	return &x, nil
}

// scanRuns reads every row of rows and closes it.
func scanRuns(rows *sql.Rows) ([]*driver.Run, error) {
	defer rows.Close()
	return driver.CollectRows(rows, func() (*driver.Run, error) { return scanRun(rows) })
}

// RunGet implements driver.RunStore, on the read pool: a committed write is
// visible to it (WAL snapshots start at the latest commit).
func (d *store) RunGet(ctx context.Context, p *driver.RunGetParams) (*driver.Run, error) {
	r, err := scanRun(d.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, p.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %d: %w", p.ID, driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading run %d: %w", p.ID, err)
	}
	return r, nil
}

// runInTx reads a run inside a write transaction with the prepared
// selectRun bound to it; nil (and no error) if the run does not exist.
func runInTx(ctx context.Context, stmt *sql.Stmt, id int64) (*driver.Run, error) {
	r, err := scanRun(stmt.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return r, err
}
