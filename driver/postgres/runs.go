package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
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
//
// A scan allocates little (a claim scans hundreds of rows, one per run it
// hands out): the text columns scan through keptText, which keeps the
// string already there when the bytes are the same — scanRuns reuses one
// runRow for every row, so a batch's queue, state and owner are allocated
// once, not per row — and the nullable times scan into
// pgtype.Timestamptz values, not pointers pgx would allocate.
type runRow struct {
	r                            driver.Run
	state                        string
	expires, finished, reclaimed pgtype.Timestamptz
	dst                          []any
}

func (x *runRow) dest() []any {
	if x.dst == nil {
		r := &x.r
		x.dst = []any{&r.ID, keptText{&r.Queue}, &r.Payload, &r.Priority, keptText{&x.state}, &r.Attempt, &r.MaxAttempts,
			&r.Fence, keptText{&r.Owner}, &r.ScheduledAt, &x.expires, keptText{&r.UniqueKey}, keptText{&r.Reason}, &r.Result,
			&r.CreatedAt, &x.finished, &r.Snoozes, &x.reclaimed}
	}
	return x.dst
}

// keptText scans a text column into *s, keeping the string *s holds when
// it has the same bytes (comparing does not allocate). The columns it
// scans are NOT NULL.
type keptText struct{ s *string }

func (k keptText) ScanBytes(v []byte) error {
	if v == nil {
		return errors.New("cannot scan NULL into a string")
	}
	if *k.s != string(v) {
		*k.s = string(v)
	}
	return nil
}

// runInto finishes the scanned row into r.
func (x *runRow) runInto(r *driver.Run) {
	*r = x.r
	r.State = runs.State(x.state)
	// pgx returns timestamptz in the local zone; every time the driver
	// hands out is UTC (the instant is the same either way).
	r.ScheduledAt, r.CreatedAt = x.r.ScheduledAt.UTC(), x.r.CreatedAt.UTC()
	r.ExpiresAt, r.FinishedAt, r.ReclaimedAt = utcOrZero(x.expires), utcOrZero(x.finished), utcOrZero(x.reclaimed)
}

func (x *runRow) run() *driver.Run {
	r := new(driver.Run)
	x.runInto(r)
	return r
}

// utcOrZero is a nullable time in UTC, zero for NULL.
func utcOrZero(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// scanRun scans one row of runColumns.
func scanRun(row pgx.Row) (*driver.Run, error) {
	var x runRow
	if err := row.Scan(x.dest()...); err != nil {
		return nil, err
	}
	return x.run(), nil
}

// scanRuns scans every row of runColumns through one runRow. The runs
// are allocated in blocks, each twice the last up to maxRunBlock, so a
// claim of hundreds allocates a handful and a claim of one allocates one.
func scanRuns(rows pgx.Rows) ([]*driver.Run, error) {
	defer rows.Close()
	var x runRow
	dest := x.dest()
	var block []driver.Run
	size := 1
	return driver.CollectRows(rows, func() (*driver.Run, error) {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if len(block) == 0 {
			block = make([]driver.Run, size)
			size = min(2*size, maxRunBlock)
		}
		r := &block[0]
		block = block[1:]
		x.runInto(r)
		return r, nil
	})
}

// maxRunBlock bounds the runs scanRuns allocates at once (and so the
// neighbours one run handed out keeps alive).
const maxRunBlock = 64

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
