package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// insertRun inserts one run, or nothing when its unique key is taken. ON
// CONFLICT waits for a transaction that holds the key uncommitted: if that
// one commits, nothing is inserted; if it rolls back, this insert goes
// ahead. Either way the key's owner is settled when the statement returns.
const insertRun = `WITH ` + storeNowSQL + `
INSERT INTO runs (queue, payload, priority, state, max_attempts, scheduled_at, unique_key, created_at)
SELECT $2, $3, $4, 'available', $5, t.now + $6::interval, $7, t.now FROM t
ON CONFLICT (unique_key) WHERE unique_key <> '' DO NOTHING
RETURNING ` + runColumns

// findRunsByKey finds the runs holding the batch's unique keys. It is its
// own statement, after the inserts: under READ COMMITTED it takes a fresh
// snapshot, so it sees a conflicting run whose transaction committed while
// an insert waited for it (a CTE of the INSERT would not: it shares the
// insert's snapshot, taken before the wait).
const findRunsByKey = `SELECT ` + runColumns + ` FROM runs WHERE unique_key = ANY($1::text[])`

// lockRunKeys takes a transaction-scoped advisory lock per unique key of
// the batch, in one global order (by the lock's hash), before any insert.
// Without it two batches taking the same keys in opposite orders would
// each wait in ON CONFLICT for the other's uncommitted row: a deadlock the
// server breaks only after deadlock_timeout, by aborting one batch. With
// it, batches that share a key queue on its lock in a consistent order and
// never hold one another's rows; batches that share none never wait.
const lockRunKeys = `SELECT count(pg_advisory_xact_lock(h)) FROM (
    SELECT DISTINCT hashtextextended('leasehold.run_key:' || k, 0) AS h FROM unnest($1::text[]) AS k ORDER BY h
) AS locks`

// RunEnqueue implements driver.RunStore: the batch is one transaction,
// pipelined in one round trip (BEGIN; when the batch has unique keys, their
// advisory locks; one INSERT per run; one lookup of the unique keys;
// COMMIT). Every run is validated first; one invalid run
// refuses the whole batch with nothing written.
func (d *Driver) RunEnqueue(ctx context.Context, p *driver.RunEnqueueParams) ([]driver.RunEnqueued, error) {
	es := make([]runs.Enqueue, len(p.Runs))
	for i := range p.Runs {
		es[i] = p.Runs[i] // a copy: validation fills defaults and normalizes the payload
		if err := runs.ValidateEnqueue(&es[i]); err != nil {
			return nil, err
		}
	}
	if len(es) == 0 {
		return []driver.RunEnqueued{}, nil
	}
	return d.enqueue(ctx, critical(p), es)
}

func (d *Driver) enqueue(ctx context.Context, crit bool, es []runs.Enqueue) (out []driver.RunEnqueued, err error) {
	fail := func(err error) error {
		return fmt.Errorf("postgres: enqueueing %d runs: %w", len(es), withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, crit)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	defer d.endTx(ctx, conn) // a failed statement leaves the transaction open (aborted)

	var keys []string
	for i := range es {
		if k := es[i].UniqueKey; k != "" {
			keys = append(keys, k)
		}
	}
	now := d.fakeNow()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	if len(keys) > 0 {
		b.Queue(lockRunKeys, keys)
	}
	for i := range es {
		e := &es[i]
		b.Queue(insertRun, now, e.Queue, e.Payload, e.Priority, e.MaxAttempts, e.Delay, e.UniqueKey)
	}
	if len(keys) > 0 {
		b.Queue(findRunsByKey, keys)
	}
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			out, err = nil, fail(cerr)
		}
	}()
	if _, err := br.Exec(); err != nil { // BEGIN
		return nil, fail(err)
	}
	if len(keys) > 0 {
		if _, err := br.Exec(); err != nil {
			return nil, fail(fmt.Errorf("locking the unique keys: %w", err))
		}
	}
	out = make([]driver.RunEnqueued, len(es))
	for i := range es {
		r, err := scanRun(br.QueryRow())
		switch {
		case err == nil:
			out[i].Run = r
		case errors.Is(err, pgx.ErrNoRows): // the key is taken: filled in below
			out[i].Existing = true
		default:
			return nil, fail(mapWriteError(err))
		}
	}
	if len(keys) > 0 {
		rows, err := br.Query()
		if err != nil {
			return nil, fail(err)
		}
		found, err := scanRuns(rows)
		if err != nil {
			return nil, fail(err)
		}
		byKey := make(map[string]*driver.Run, len(found))
		for _, r := range found {
			byKey[r.UniqueKey] = r
		}
		for i := range out {
			if !out[i].Existing {
				continue
			}
			if out[i].Run = byKey[es[i].UniqueKey]; out[i].Run == nil {
				// Runs are never deleted, so a key that refused an insert
				// must be held by a committed run.
				return nil, fail(fmt.Errorf("unique key %q refused the insert but no run holds it", es[i].UniqueKey))
			}
		}
	}
	if _, err := br.Exec(); err != nil { // COMMIT: only now are the runs durable
		return nil, fail(fmt.Errorf("commit: %w", err))
	}
	return out, nil
}
