package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

var _ driver.RunStore = (*store)(nil)

// runColumns are the runs columns every statement returns, in the order
// runRow.dest scans them; runColumnsR is the same list qualified by the
// alias r, for an UPDATE … FROM joining a CTE whose names overlap.
const (
	runColumns = `id, queue, payload, priority, state, attempt, max_attempts, fence, owner,
	scheduled_at, expires_at, unique_key, reason, result, created_at, finished_at, snoozes, reclaimed_at`
	runColumnsR = `r.id, r.queue, r.payload, r.priority, r.state, r.attempt, r.max_attempts, r.fence, r.owner,
	r.scheduled_at, r.expires_at, r.unique_key, r.reason, r.result, r.created_at, r.finished_at, r.snoozes, r.reclaimed_at`
)

// storeNowSQL is the store time of one statement: the injected StoreClock
// ($1, normalized to the store's microseconds) or clock_timestamp(). As a
// CTE with a volatile function it is evaluated exactly once per statement,
// so every time a statement writes (and every comparison it makes) is the
// same instant.
const storeNowSQL = `t AS (SELECT coalesce($1::timestamptz, clock_timestamp()) AS now)`

// runRow is the scan target of one runs row; run converts it, reading the
// nullable columns as zero values and times in UTC.
type runRow struct {
	r                  driver.Run
	state              string
	expires, finished  *time.Time
	reclaimed          *time.Time
	scheduled, created time.Time
}

func (x *runRow) dest() []any {
	r := &x.r
	return []any{&r.ID, &r.Queue, &r.Payload, &r.Priority, &x.state, &r.Attempt, &r.MaxAttempts,
		&r.Fence, &r.Owner, &x.scheduled, &x.expires, &r.UniqueKey, &r.Reason, &r.Result, &x.created, &x.finished, &r.Snoozes, &x.reclaimed}
}

func (x *runRow) run() *driver.Run {
	r := x.r
	r.State = runs.State(x.state)
	// pgx returns timestamptz in the local zone; every time the driver
	// hands out is UTC (the instant is the same either way).
	r.ScheduledAt, r.CreatedAt = x.scheduled.UTC(), x.created.UTC()
	if x.expires != nil {
		r.ExpiresAt = x.expires.UTC()
	}
	if x.finished != nil {
		r.FinishedAt = x.finished.UTC()
	}
	if x.reclaimed != nil {
		r.ReclaimedAt = x.reclaimed.UTC()
	}
	return &r
}

// scanRun scans one row of runColumns.
func scanRun(row pgx.Row) (*driver.Run, error) {
	var x runRow
	if err := row.Scan(x.dest()...); err != nil {
		return nil, err
	}
	return x.run(), nil
}

// scanRuns scans every row of runColumns.
func scanRuns(rows pgx.Rows) ([]*driver.Run, error) {
	defer rows.Close()
	return driver.CollectRows(rows, func() (*driver.Run, error) { return scanRun(rows) })
}

// RunGet implements driver.RunStore. It is a read: the general pool.
func (d *store) RunGet(ctx context.Context, p *driver.RunGetParams) (*driver.Run, error) {
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading run %d: %w", p.ID, err)
	}
	defer conn.Release()
	r, err := scanRun(conn.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, p.ID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("run %d: %w", p.ID, driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: reading run %d: %w", p.ID, withCtx(ctx, err))
	}
	return r, nil
}

// readRunForRefusal is the refusal path's read, after a conditional UPDATE
// matched nothing: the run as it is now (a fresh snapshot, so it shows what
// the UPDATE waited for) and the store time. nil if the run does not exist.
const readRunForRefusal = `SELECT coalesce($1::timestamptz, clock_timestamp()), ` + runColumns + ` FROM runs WHERE id = $2`

// refusal explains a conditional write that matched no row, from the run as
// it is now (nil if missing) and the store time.
type refusal func(cur *driver.Run, now time.Time) error

// runWrite is the one path of every single-run transition: one conditional
// UPDATE … RETURNING in autocommit (one round trip, one commit) on the
// pool the params' class names. When it matches no row nothing was
// written, and a second round trip reads the run so refuse can say why.
func (d *store) runWrite(ctx context.Context, op string, id int64, crit bool, query string, args []any,
	refuse refusal) (*driver.Run, error) {
	fail := func(err error) error {
		return fmt.Errorf("postgres: %s run %d: %w", op, id, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, crit)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	r, err := scanRun(conn.QueryRow(ctx, query, args...))
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fail(mapWriteError(err))
	}
	cur, now, err := readRun(ctx, conn, d.fakeNow(), id)
	if err != nil {
		return nil, fail(fmt.Errorf("reading the run after a refused write: %w", err))
	}
	return nil, refuse(cur, now)
}

// readRun reads a run and the store time on conn; cur is nil when the run
// does not exist.
func readRun(ctx context.Context, conn *pgxpool.Conn, fake *time.Time, id int64) (cur *driver.Run, now time.Time, err error) {
	var x runRow
	err = conn.QueryRow(ctx, readRunForRefusal, fake, id).Scan(append([]any{&now}, x.dest()...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	return x.run(), now.UTC(), nil
}
