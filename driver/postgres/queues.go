package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

var _ driver.QueueStore = (*store)(nil)

// queueColumns is the registry row as scanQueue reads it.
const queueColumns = `name, paused, max_running, rate_limit, rate_period_us, created_at, updated_at`

func scanQueue(r pgx.Row) (*driver.Queue, error) {
	var q driver.Queue
	var maxRunning, rate *int32
	var period *int64
	if err := r.Scan(&q.Name, &q.Paused, &maxRunning, &rate, &period, &q.CreatedAt, &q.UpdatedAt); err != nil {
		return nil, err
	}
	if maxRunning != nil {
		q.MaxRunning = int(*maxRunning)
	}
	if rate != nil {
		q.RateLimit = int(*rate)
	}
	if period != nil {
		q.RatePeriod = time.Duration(*period) * time.Microsecond
	}
	q.CreatedAt, q.UpdatedAt = q.CreatedAt.UTC(), q.UpdatedAt.UTC()
	return &q, nil
}

// pauseQueue upserts the paused flag of a queue the store knows — a
// registry row, or a run in any state ($4, Declare, skips the check) — in
// one statement, and returns nothing for a queue it does not know. The
// runs half of the check scans until its first match: an operator's call,
// and a name nobody used costs one pass over runs.
const pauseQueue = `WITH ` + storeNowSQL + `
INSERT INTO queues (name, paused, created_at, updated_at)
SELECT $2, $3, t.now, t.now FROM t
WHERE $4 OR EXISTS (SELECT 1 FROM queues WHERE name = $2) OR EXISTS (SELECT 1 FROM runs WHERE queue = $2)
ON CONFLICT (name) DO UPDATE SET paused = EXCLUDED.paused, updated_at = EXCLUDED.updated_at
RETURNING ` + queueColumns

// QueuePause implements driver.QueueStore in one statement.
func (d *store) QueuePause(ctx context.Context, p *driver.QueuePauseParams) (*driver.Queue, error) {
	verb := "pausing"
	if !p.Paused {
		verb = "resuming"
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fmt.Errorf("postgres: %s queue %q: %w", verb, p.Queue, err)
	}
	defer conn.Release()
	q, err := scanQueue(conn.QueryRow(ctx, pauseQueue, d.fakeNow(), p.Queue, p.Paused, p.Declare))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &driver.QueueUnknownError{Queue: p.Queue}
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: %s queue %q: %w", verb, p.Queue, withCtx(ctx, err))
	}
	return q, nil
}

const setQueueLimits = `WITH ` + storeNowSQL + `
INSERT INTO queues (name, max_running, rate_limit, rate_period_us, created_at, updated_at)
SELECT $2, $3, $4, $5, t.now, t.now FROM t
ON CONFLICT (name) DO UPDATE SET max_running = EXCLUDED.max_running, rate_limit = EXCLUDED.rate_limit,
    rate_period_us = EXCLUDED.rate_period_us, updated_at = EXCLUDED.updated_at
RETURNING ` + queueColumns

// QueueSetLimits implements driver.QueueStore: one upsert.
func (d *store) QueueSetLimits(ctx context.Context, p *driver.QueueSetLimitsParams) (*driver.Queue, error) {
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fmt.Errorf("postgres: setting the limits of queue %q: %w", p.Queue, err)
	}
	defer conn.Release()
	q, err := scanQueue(conn.QueryRow(ctx, setQueueLimits, d.fakeNow(), p.Queue,
		nullPositive(int64(p.MaxRunning)), nullPositive(int64(p.RateLimit)), nullPositive(p.RatePeriod.Microseconds())))
	if err != nil {
		return nil, fmt.Errorf("postgres: setting the limits of queue %q: %w", p.Queue, withCtx(ctx, err))
	}
	return q, nil
}

// nullPositive stores a limit of 0 ("none") as NULL.
func nullPositive(v int64) *int64 {
	if v <= 0 {
		return nil
	}
	return &v
}

// QueueList implements driver.QueueStore. It is a read: the general pool;
// the registry, then the runs counted by (queue, state) — one pass over
// runs.
func (d *store) QueueList(ctx context.Context, _ *driver.QueueListParams) ([]*driver.Queue, error) {
	fail := func(err error) error { return fmt.Errorf("postgres: listing queues: %w", withCtx(ctx, err)) }
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT `+queueColumns+` FROM queues`)
	if err != nil {
		return nil, fail(err)
	}
	reg, err := driver.CollectRows(rows, func() (*driver.Queue, error) { return scanQueue(rows) })
	rows.Close()
	if err != nil {
		return nil, fail(err)
	}
	rows, err = conn.Query(ctx, `SELECT queue, state, count(*) FROM runs GROUP BY queue, state`)
	if err != nil {
		return nil, fail(err)
	}
	defer rows.Close()
	counts, err := driver.CollectRows(rows, func() (driver.QueueCount, error) {
		var c driver.QueueCount
		var state string
		err := rows.Scan(&c.Queue, &state, &c.N)
		c.State = runs.State(state)
		return c, err
	})
	if err != nil {
		return nil, fail(err)
	}
	return driver.MergeQueues(reg, counts), nil
}
