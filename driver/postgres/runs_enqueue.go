package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// insertRun inserts one run with a unique key, or nothing when the key is
// held by another run (runs_unique_key: the same key and period bucket,
// held while that run's state is in its unique_states; $8 is this run's
// set, $9 its period in microseconds, 0 for none). ON CONFLICT waits for a
// transaction that holds the key uncommitted: if that one commits, nothing
// is inserted; if it rolls back, this insert goes ahead. Either way the
// key's owner is settled when the statement returns. The conflict target
// is left out: the index's predicate is an expression no target could
// name, and the identity id cannot conflict.
const insertRun = `WITH ` + storeNowSQL + `
INSERT INTO runs (queue, payload, priority, state, max_attempts, scheduled_at, unique_key, created_at, unique_states, unique_bucket)
SELECT $2, $3, $4, 'available', $5, t.now + $6::interval, $7, t.now, $8, ` + uniqueBucketSQL + ` FROM t
ON CONFLICT DO NOTHING
RETURNING ` + runColumns

// uniqueBucketSQL is the period bucket of store time t.now for a period of
// $9 microseconds (0: none), as runs.Enqueue.UniqueBucket computes it.
const uniqueBucketSQL = `CASE WHEN $9::bigint > 0 THEN
    (floor(extract(epoch FROM t.now) * 1000000)::bigint / $9::bigint) * $9::bigint ELSE 0 END`

// uniqueHeldSQL is runs_unique_key's predicate: the row holds its key.
const uniqueHeldSQL = `unique_key <> '' AND (unique_states & (CASE state
    WHEN 'available' THEN 1 WHEN 'running' THEN 2 WHEN 'blocked' THEN 4
    WHEN 'completed' THEN 8 WHEN 'failed' THEN 16 WHEN 'cancelled' THEN 32 ELSE 0 END)) <> 0`

// findRunsByKey finds the runs holding the batch's unique keys: per key,
// the holder of the latest period bucket (the one an insert of this batch
// just conflicted with: no later bucket has begun unless the store clock
// crossed a period's end between the two statements). It is its own
// statement, after the inserts: under READ COMMITTED it takes a fresh
// snapshot, so it sees a conflicting run whose transaction committed while
// an insert waited for it (a CTE of the INSERT would not: it shares the
// insert's snapshot, taken before the wait).
const findRunsByKey = `SELECT DISTINCT ON (unique_key) ` + runColumns + ` FROM runs
WHERE unique_key = ANY($1::text[]) AND ` + uniqueHeldSQL + `
ORDER BY unique_key, unique_bucket DESC`

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

// insertRuns inserts runs without a unique key, one per element of the
// arrays ($2 … $6: queue, payload, priority, max_attempts, delay), in
// array order. There is no ON CONFLICT: a run without a key cannot
// conflict (the unique index is partial), and any constraint failure is an
// error. ORDER BY ordinality feeds the rows to the insert in array order,
// so the identity ids, drawn as each row is inserted, ascend in it.
// RETURNING promises no order: the caller sorts the rows by id and checks
// each against its run (placeChunk). It returns only the columns the
// insert did not take from the run as given — the id and the two times —
// so a row is 43 bytes on the wire, not 141 plus the payload echoed back;
// every other column of a fresh run is the caller's value or a constant.
const insertRuns = `WITH ` + storeNowSQL + `
INSERT INTO runs (queue, payload, priority, state, max_attempts, scheduled_at, unique_key, created_at)
SELECT u.queue, u.payload, u.priority, 'available', u.max_attempts, t.now + u.delay, '', t.now
FROM t CROSS JOIN unnest($2::text[], $3::bytea[], $4::int[], $5::int[], $6::interval[])
    WITH ORDINALITY AS u(queue, payload, priority, max_attempts, delay, ord)
ORDER BY u.ord
RETURNING id, created_at, scheduled_at`

// enqueueChunk bounds the runs of one insertRuns, so that no statement's
// arrays (and RETURNING rows) grow with the batch: a longer stretch of
// runs without a key goes in as several statements of one pipeline.
const enqueueChunk = 1000

// RunEnqueue implements driver.RunStore: the batch is one transaction,
// pipelined in one round trip (BEGIN; when the batch has unique keys, their
// advisory locks; the runs in input order — each stretch of runs without a
// unique key as one insertRuns per enqueueChunk runs, each run with a key
// as one insertRun; one lookup of the unique keys; COMMIT). A batch that
// is one insertRuns (no unique key, at most enqueueChunk runs: the common
// case) is sent alone, as its own implicit transaction — as atomic, and
// two statements shorter. Every run is validated first; one invalid run
// refuses the whole batch with nothing written.
func (d *store) RunEnqueue(ctx context.Context, p *driver.RunEnqueueParams) ([]driver.RunEnqueued, error) {
	es := p.Runs // valid, defaults filled, payloads compact: driver.Validating
	if len(es) == 0 {
		return []driver.RunEnqueued{}, nil
	}
	return d.enqueue(ctx, critical(p), es)
}

// enqueueStep is one statement of the pipeline: runs [from, to), either
// one run with a unique key (insertRun) or a chunk without (insertRuns).
type enqueueStep struct {
	from, to int
	keyed    bool
}

// enqueueSteps splits the batch into its statements, in input order.
func enqueueSteps(es []runs.Enqueue) []enqueueStep {
	var steps []enqueueStep
	for i := 0; i < len(es); {
		if es[i].UniqueKey != "" {
			steps = append(steps, enqueueStep{from: i, to: i + 1, keyed: true})
			i++
			continue
		}
		j := i + 1
		for j < len(es) && es[j].UniqueKey == "" && j-i < enqueueChunk {
			j++
		}
		steps = append(steps, enqueueStep{from: i, to: j})
		i = j
	}
	return steps
}

// queueChunk queues one insertRuns of the runs es.
func queueChunk(b *pgx.Batch, now *time.Time, es []runs.Enqueue) {
	queues := make([]string, len(es))
	payloads := make([][]byte, len(es))
	priorities := make([]int32, len(es))
	attempts := make([]int32, len(es))
	// Intervals of microseconds alone, as pgx encodes a time.Duration
	// (insertRun's delay), without its per-element reflection.
	delays := make([]pgtype.Interval, len(es))
	for i := range es {
		e := &es[i]
		queues[i], payloads[i] = e.Queue, e.Payload
		priorities[i], attempts[i] = int32(e.Priority), int32(e.MaxAttempts) // validated: far inside int32
		delays[i] = pgtype.Interval{Microseconds: e.Delay.Microseconds(), Valid: true}
	}
	b.Queue(insertRuns, now, queues, payloads, priorities, attempts, delays)
}

// insertedRow is one row insertRuns returns.
type insertedRow struct {
	id                 int64
	created, scheduled time.Time
}

// scanInserted reads the rows of one insertRuns.
func scanInserted(rows pgx.Rows, n int) ([]insertedRow, error) {
	defer rows.Close()
	got := make([]insertedRow, 0, n)
	var x insertedRow
	for rows.Next() {
		if err := rows.Scan(&x.id, &x.created, &x.scheduled); err != nil {
			return nil, err
		}
		got = append(got, x)
	}
	return got, rows.Err()
}

// placeChunk matches the rows one insertRuns returned to its runs es:
// sorted by id they are in insertion order, which is input order. Each row
// is checked — distinct ids, the one store time the statement wrote to
// every row, and each run's delay between its two times — so that the
// batch fails (and rolls back) rather than hand out a row it cannot
// account for. The rest of each run is what the insert wrote: the run as
// given and a fresh run's constants, the values RunGet reads back. The
// payload is es's own: driver.Validating's normalized copy, made for this
// call alone (runs.NormalizePayload clones), never the caller's bytes.
func placeChunk(got []insertedRow, es []runs.Enqueue, out []driver.RunEnqueued) error {
	if len(got) != len(es) {
		return fmt.Errorf("inserting %d runs returned %d rows", len(es), len(got))
	}
	slices.SortFunc(got, func(a, b insertedRow) int { return cmp.Compare(a.id, b.id) })
	var block []driver.Run // as scanRuns: no run handed out keeps more than maxRunBlock alive
	for k, g := range got {
		e := &es[k]
		if (k > 0 && g.id == got[k-1].id) || !g.created.Equal(got[0].created) ||
			g.scheduled.Sub(g.created) != e.Delay.Truncate(time.Microsecond) {
			return fmt.Errorf("inserting %d runs: row %d (id %d) does not match its run", len(es), k, g.id)
		}
		if len(block) == 0 {
			block = make([]driver.Run, min(len(es)-k, maxRunBlock))
		}
		r := &block[0]
		block = block[1:]
		*r = driver.Run{ID: g.id, Queue: e.Queue, Payload: e.Payload,
			Priority: e.Priority, State: runs.StateAvailable, MaxAttempts: e.MaxAttempts,
			ScheduledAt: g.scheduled.UTC(), CreatedAt: g.created.UTC()}
		out[k].Run = r
	}
	return nil
}

// enqueuePlan is one batch's statements: the unique keys to lock and
// look up, and the inserts in input order.
type enqueuePlan struct {
	es    []runs.Enqueue
	keys  []string
	steps []enqueueStep
}

func planEnqueue(es []runs.Enqueue) *enqueuePlan {
	pl := &enqueuePlan{es: es, steps: enqueueSteps(es)}
	for i := range es {
		if k := es[i].UniqueKey; k != "" {
			pl.keys = append(pl.keys, k)
		}
	}
	return pl
}

// queue queues the plan's statements, between the caller's BEGIN and
// COMMIT if it has them.
func (pl *enqueuePlan) queue(b *pgx.Batch, now *time.Time) {
	es := pl.es
	if len(pl.keys) > 0 {
		b.Queue(lockRunKeys, pl.keys)
	}
	for _, s := range pl.steps {
		if s.keyed {
			e := &es[s.from]
			b.Queue(insertRun, now, e.Queue, e.Payload, e.Priority, e.MaxAttempts, e.Delay, e.UniqueKey,
				e.UniqueMask(), e.UniquePeriod.Microseconds())
		} else {
			queueChunk(b, now, es[s.from:s.to])
		}
	}
	if len(pl.keys) > 0 {
		b.Queue(findRunsByKey, pl.keys)
	}
}

// read reads the answers of the statements queue queued, in order.
func (pl *enqueuePlan) read(br pgx.BatchResults) ([]driver.RunEnqueued, error) {
	es := pl.es
	if len(pl.keys) > 0 {
		if _, err := br.Exec(); err != nil {
			return nil, fmt.Errorf("locking the unique keys: %w", err)
		}
	}
	out := make([]driver.RunEnqueued, len(es))
	for _, s := range pl.steps {
		if !s.keyed {
			rows, err := br.Query()
			if err != nil {
				return nil, mapWriteError(err)
			}
			got, err := scanInserted(rows, s.to-s.from)
			if err != nil {
				return nil, mapWriteError(err)
			}
			if err := placeChunk(got, es[s.from:s.to], out[s.from:s.to]); err != nil {
				return nil, err
			}
			continue
		}
		r, err := scanRun(br.QueryRow())
		switch {
		case err == nil:
			out[s.from].Run = r
		case errors.Is(err, pgx.ErrNoRows): // the key is taken: filled in below
			out[s.from].Existing = true
		default:
			return nil, mapWriteError(err)
		}
	}
	if len(pl.keys) == 0 {
		return out, nil
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	found, err := scanRuns(rows)
	if err != nil {
		return nil, err
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
			// The holder left its unique states (cancelled, failed, or
			// deleted by the cleaner) between the insert and the lookup:
			// the batch rolls back and the caller may enqueue again.
			return nil, &keyReleasedError{key: es[i].UniqueKey}
		}
	}
	return out, nil
}

// keyReleasedError is a unique key that refused an insert and was
// released before the lookup could read its holder. RunEnqueue tries the
// batch again (its transaction rolled back); in the caller's own
// transaction it is the caller's ErrConflict to retry.
type keyReleasedError struct{ key string }

func (e *keyReleasedError) Error() string {
	return fmt.Sprintf("unique key %q refused the insert, then its run released it before it could be read; enqueue again", e.key)
}

// Unwrap returns ErrConflict.
func (e *keyReleasedError) Unwrap() error { return driver.ErrConflict }

// enqueueTries bounds RunEnqueue's retries of a batch whose key holder
// released the key mid-batch: each needs a holder leaving its unique
// states in the microseconds between two statements.
const enqueueTries = 3

func (d *store) enqueue(ctx context.Context, crit bool, es []runs.Enqueue) (out []driver.RunEnqueued, err error) {
	for try := 1; ; try++ {
		out, err = d.enqueueOnce(ctx, crit, es)
		var kr *keyReleasedError
		if err == nil || !errors.As(err, &kr) || try == enqueueTries || ctx.Err() != nil {
			return out, err
		}
	}
}

func (d *store) enqueueOnce(ctx context.Context, crit bool, es []runs.Enqueue) (out []driver.RunEnqueued, err error) {
	fail := func(err error) error {
		return fmt.Errorf("postgres: enqueueing %d runs: %w", len(es), withCtx(ctx, err))
	}
	pl := planEnqueue(es)
	// One statement needs no BEGIN and COMMIT: it is its own transaction.
	tx := len(pl.steps) > 1 || pl.steps[0].keyed
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(pl.steps)+4)}
	if tx {
		b.Queue("BEGIN")
	}
	pl.queue(b, d.fakeNow())
	if tx {
		b.Queue("COMMIT")
	}

	conn, err := d.acquire(ctx, crit)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	defer d.endTx(ctx, conn) // a failed statement leaves the transaction open (aborted)
	br := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			out, err = nil, fail(cerr)
		}
	}()
	if tx {
		if _, err := br.Exec(); err != nil { // BEGIN
			return nil, fail(err)
		}
	}
	if out, err = pl.read(br); err != nil {
		return nil, fail(err)
	}
	if !tx {
		// The implicit transaction commits at the pipeline's Sync: the
		// deferred br.Close reads that outcome and reports a failure.
		return out, nil
	}
	if _, err := br.Exec(); err != nil { // COMMIT: only now are the runs durable
		return nil, fail(fmt.Errorf("commit: %w", err))
	}
	return out, nil
}
