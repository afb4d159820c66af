package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

var _ driver.RunStore = (*store)(nil)

// runColumns is the column list every run statement selects or returns, in
// scanRun's order.
const runColumns = `id, queue, payload, priority, state, attempt, max_attempts, fence, owner,
	scheduled_at, expires_at, unique_key, reason, result, created_at, finished_at, snoozes, reclaimed_at`

// claimedColumns is what a claim returns (runClaimSQL,
// runClaimLimitedSQL): runColumns less the four the claim decides itself —
// queue (its WHERE pins it), state, owner and expires_at (its SET writes
// them, from its own parameters). scanClaimed fills those from the claim's
// parameters instead of reading them back: three strings and a time per
// claimed run that modernc.org/sqlite would copy out of SQLite and
// database/sql box, a quarter of a claim's allocations
// (docs/BENCHMARKS.md, stop 27).
const claimedColumns = `id, payload, priority, attempt, max_attempts, fence,
	scheduled_at, unique_key, reason, result, created_at, finished_at, snoozes, reclaimed_at`

// runScanner reads rows of runColumns or claimedColumns into one set of
// destinations, reused from row to row: Scan's destinations escape (they
// are passed as interfaces), so a scan per row into fresh variables cost
// seven allocations a row where this costs one (the *driver.Run). A zero
// runScanner is ready; it is not safe for concurrent use.
type runScanner struct {
	x                            driver.Run
	state                        string
	scheduled, created           int64
	expires, finished, reclaimed sql.NullInt64
	all, claimed                 []any // the destinations, built on first use
}

// scan reads one row of runColumns into s.x.
func (s *runScanner) scan(r rowScanner) error {
	if s.all == nil {
		x := &s.x
		s.all = []any{&x.ID, &x.Queue, &x.Payload, &x.Priority, &s.state, &x.Attempt, &x.MaxAttempts, &x.Fence,
			&x.Owner, &s.scheduled, &s.expires, &x.UniqueKey, &x.Reason, &x.Result, &s.created, &s.finished, &x.Snoozes, &s.reclaimed}
	}
	if err := r.Scan(s.all...); err != nil {
		return err
	}
	s.x.State = runs.State(s.state)
	s.x.ExpiresAt = fromNullMicros(s.expires)
	s.finish()
	return nil
}

// scanClaimed reads one row of claimedColumns into s.x, a run a claim by
// owner of queue just took with the lease expiring at expires (Unix
// microseconds, as the claim wrote it).
func (s *runScanner) scanClaimed(r rowScanner, queue, owner string, expires int64) error {
	if s.claimed == nil {
		x := &s.x
		s.claimed = []any{&x.ID, &x.Payload, &x.Priority, &x.Attempt, &x.MaxAttempts, &x.Fence,
			&s.scheduled, &x.UniqueKey, &x.Reason, &x.Result, &s.created, &s.finished, &x.Snoozes, &s.reclaimed}
	}
	if err := r.Scan(s.claimed...); err != nil {
		return err
	}
	s.x.Queue, s.x.State, s.x.Owner, s.x.ExpiresAt = queue, runs.StateRunning, owner, fromMicros(expires)
	s.finish()
	return nil
}

// finish sets the fields of s.x that both scans read the same way. NULL
// times become the zero time and a NULL (or empty) payload or result
// becomes nil.
func (s *runScanner) finish() {
	x := &s.x
	x.ScheduledAt = fromMicros(s.scheduled)
	x.CreatedAt = fromMicros(s.created)
	x.FinishedAt = fromNullMicros(s.finished)
	x.ReclaimedAt = fromNullMicros(s.reclaimed)
	if len(x.Payload) == 0 {
		x.Payload = nil
	}
	if len(x.Result) == 0 {
		x.Result = nil
	}
}

// fromNullMicros is fromMicros of a nullable column: NULL is the zero time.
func fromNullMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMicros(v.Int64)
}

// scanRun reads one row of runColumns (runScanner.scan).
func scanRun(r rowScanner) (*driver.Run, error) {
	s := new(runScanner)
	if err := s.scan(r); err != nil {
		return nil, err
	}
	return &s.x, nil
}

// scanRuns reads every row of runColumns in rows and closes it.
func scanRuns(rows *sql.Rows) ([]*driver.Run, error) {
	defer rows.Close()
	var s runScanner
	return driver.CollectRows(rows, func() (*driver.Run, error) {
		if err := s.scan(rows); err != nil {
			return nil, err
		}
		x := new(driver.Run)
		*x = s.x
		return x, nil
	})
}

// scanClaimedRuns reads every row of claimedColumns in rows
// (runScanner.scanClaimed) and closes it.
func scanClaimedRuns(rows *sql.Rows, queue, owner string, expires int64) ([]*driver.Run, error) {
	defer rows.Close()
	var s runScanner
	return driver.CollectRows(rows, func() (*driver.Run, error) {
		if err := s.scanClaimed(rows, queue, owner, expires); err != nil {
			return nil, err
		}
		x := new(driver.Run)
		*x = s.x
		return x, nil
	})
}

// RunGet implements driver.RunStore, on the read pool: a committed write is
// visible to it (WAL snapshots start at the latest commit).
func (d *store) RunGet(ctx context.Context, p *driver.RunGetParams) (*driver.Run, error) {
	st, err := d.readPrepared(ctx)
	if err != nil {
		return nil, err
	}
	r, err := scanRun(st.runByID.QueryRowContext(ctx, p.ID))
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
