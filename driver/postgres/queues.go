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

// markCounted puts the running runs of a queue that has just been given a
// concurrency limit into its count (runs_running_counted, migration 0017):
// they were claimed while it had none, by the plain claim, counted = false.
const markCounted = `UPDATE runs SET counted = true WHERE queue = $1 AND state = 'running' AND NOT counted`

// limitsLockTimeout bounds how long QueueSetLimits waits for the claims and
// other writes to runs in flight (and how long new ones wait behind it): a
// caller's own transaction holding runs (RunEnqueueTx) past it makes the
// call fail with a retryable timeout, not stall every worker.
const limitsLockTimeout = "5s"

// QueueSetLimits implements driver.QueueStore: the upsert of the queue's
// registry row and, when it sets a limit, in the same transaction:
//
//  1. LOCK TABLE runs IN SHARE ROW EXCLUSIVE MODE — it conflicts with the
//     ROW EXCLUSIVE lock every writer of runs takes, so it waits for every
//     claim in flight to commit, and a claim that starts meanwhile waits
//     for this transaction. A statement takes its table locks before its
//     snapshot, so such a claim reads the new limit. (The lock also
//     conflicts with itself: two calls for different queues serialize
//     instead of deadlocking on each other's UPDATE of runs.)
//  2. markCounted: the runs running now — claimed while the queue had no
//     limit — join the count.
//
// Without the lock, a plain claim whose snapshot predates the limit could
// commit after step 2 with counted = false, and its runs would be missing
// from the count: the limit exceeded by up to one batch. The same lock
// makes a rate limit apply to every claim that commits after the call
// returns. The queue's row is locked (by the upsert) before the table, the
// order the controlled claim takes them in (queues_claim.go), so the two
// cannot deadlock. Setting no limit (pausing is QueuePause) takes no lock.
func (d *store) QueueSetLimits(ctx context.Context, p *driver.QueueSetLimitsParams) (_ *driver.Queue, err error) {
	fail := func(err error) error {
		return fmt.Errorf("postgres: setting the limits of queue %q: %w", p.Queue, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fmt.Errorf("postgres: setting the limits of queue %q: %w", p.Queue, err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, fail(err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	q, err := scanQueue(tx.QueryRow(ctx, setQueueLimits, d.fakeNow(), p.Queue,
		nullPositive(int64(p.MaxRunning)), nullPositive(int64(p.RateLimit)), nullPositive(p.RatePeriod.Microseconds())))
	if err != nil {
		return nil, fail(err)
	}
	if p.MaxRunning > 0 || p.RateLimit > 0 {
		if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true)", limitsLockTimeout); err != nil {
			return nil, fail(err)
		}
		if _, err := tx.Exec(ctx, "LOCK TABLE runs IN SHARE ROW EXCLUSIVE MODE"); err != nil {
			return nil, fail(err)
		}
		if p.MaxRunning > 0 {
			if _, err := tx.Exec(ctx, markCounted, p.Queue); err != nil {
				return nil, fail(err)
			}
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fail(err)
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
