package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

var _ driver.QueueStore = (*store)(nil)

// queueColumns is the registry row as scanQueue reads it.
const queueColumns = `name, paused, max_running, rate_limit, rate_period_us, created_at, updated_at`

func scanQueue(r rowScanner) (*driver.Queue, error) {
	var q driver.Queue
	var maxRunning, rate, period sql.NullInt64
	var created, updated int64
	if err := r.Scan(&q.Name, &q.Paused, &maxRunning, &rate, &period, &created, &updated); err != nil {
		return nil, err
	}
	q.MaxRunning, q.RateLimit = int(maxRunning.Int64), int(rate.Int64)
	q.RatePeriod = time.Duration(period.Int64) * time.Microsecond
	q.CreatedAt, q.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &q, nil
}

// queueKnownSQL says whether the store knows a queue: a registry row, or a
// run in any state. The runs half scans until its first match — an
// operator's call, and a name nobody used costs one pass over runs.
const queueKnownSQL = `SELECT EXISTS (SELECT 1 FROM queues WHERE name = ?1) OR EXISTS (SELECT 1 FROM runs WHERE queue = ?1)`

// QueuePause implements driver.QueueStore in one write transaction: the
// check that the queue is known and the upsert see the same store.
func (d *store) QueuePause(ctx context.Context, p *driver.QueuePauseParams) (*driver.Queue, error) {
	verb := "pausing"
	if !p.Paused {
		verb = "resuming"
	}
	fail := func(err error) error { return fmt.Errorf("sqlite: %s queue %q: %w", verb, p.Queue, err) }
	tx, err := d.w.BeginTx(ctx, nil) // _txlock=immediate: takes the writer lock
	if err != nil {
		return nil, fail(err)
	}
	defer tx.Rollback()
	if !p.Declare {
		var known bool
		if err := tx.QueryRowContext(ctx, queueKnownSQL, p.Queue).Scan(&known); err != nil {
			return nil, fail(err)
		}
		if !known {
			return nil, &driver.QueueUnknownError{Queue: p.Queue}
		}
	}
	now := journal.NormalizeTime(d.clock.Now()).UnixMicro()
	q, err := scanQueue(tx.QueryRowContext(ctx, `INSERT INTO queues (name, paused, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)
		ON CONFLICT (name) DO UPDATE SET paused = excluded.paused, updated_at = excluded.updated_at
		RETURNING `+queueColumns, p.Queue, boolInt(p.Paused), now))
	if err != nil {
		return nil, fail(err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fail(err)
	}
	return q, nil
}

// QueueSetLimits implements driver.QueueStore: one upsert.
func (d *store) QueueSetLimits(ctx context.Context, p *driver.QueueSetLimitsParams) (*driver.Queue, error) {
	now := journal.NormalizeTime(d.clock.Now()).UnixMicro()
	q, err := scanQueue(d.w.QueryRowContext(ctx, `INSERT INTO queues (name, max_running, rate_limit, rate_period_us, created_at, updated_at)
		VALUES (?1, ?2, ?3, ?4, ?5, ?5)
		ON CONFLICT (name) DO UPDATE SET max_running = excluded.max_running, rate_limit = excluded.rate_limit,
		    rate_period_us = excluded.rate_period_us, updated_at = excluded.updated_at
		RETURNING `+queueColumns, p.Queue, nullPositive(int64(p.MaxRunning)), nullPositive(int64(p.RateLimit)),
		nullPositive(p.RatePeriod.Microseconds()), now))
	if err != nil {
		return nil, fmt.Errorf("sqlite: setting the limits of queue %q: %w", p.Queue, err)
	}
	return q, nil
}

// nullPositive stores a limit of 0 ("none") as NULL.
func nullPositive(v int64) any {
	if v <= 0 {
		return nil
	}
	return v
}

// QueueList implements driver.QueueStore, on the read pool: the registry,
// then the runs counted by (queue, state) — one pass over runs.
func (d *store) QueueList(ctx context.Context, _ *driver.QueueListParams) ([]*driver.Queue, error) {
	fail := func(err error) error { return fmt.Errorf("sqlite: listing queues: %w", err) }
	rows, err := d.r.QueryContext(ctx, `SELECT `+queueColumns+` FROM queues`)
	if err != nil {
		return nil, fail(err)
	}
	reg, err := driver.CollectRows(rows, func() (*driver.Queue, error) { return scanQueue(rows) })
	rows.Close()
	if err != nil {
		return nil, fail(err)
	}
	rows, err = d.r.QueryContext(ctx, `SELECT queue, state, count(*) FROM runs GROUP BY queue, state`)
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
