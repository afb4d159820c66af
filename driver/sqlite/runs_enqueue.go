package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// runInsertSQL inserts one available run. A unique key held by another
// run (runs_unique_key: the same key and period bucket, held while that
// run's state is in its unique_states) makes it insert nothing and return
// no row. The conflict target is left out: the index's predicate is an
// expression no target could name, and the only other unique constraint,
// the AUTOINCREMENT id, cannot conflict. Any other constraint failure is
// still an error.
const runInsertSQL = `INSERT INTO runs (queue, payload, priority, state, max_attempts, scheduled_at, unique_key, created_at, unique_states, unique_bucket)
VALUES (?, ?, ?, 'available', ?, ?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING
RETURNING ` + runColumns

// uniqueHeldSQL is runs_unique_key's predicate: the row holds its key.
const uniqueHeldSQL = `unique_key <> '' AND (unique_states & (CASE state
    WHEN 'available' THEN 1 WHEN 'running' THEN 2 WHEN 'blocked' THEN 4
    WHEN 'completed' THEN 8 WHEN 'failed' THEN 16 WHEN 'cancelled' THEN 32 ELSE 0 END)) <> 0`

// keylessUniqueStates is what a run without a unique key stores in
// unique_states: the column's default, as the chunk insert leaves it.
const keylessUniqueStates = 63

// enqueueChunk is how many runs without a unique key one
// runInsertChunkSQL inserts. Per run, a statement per chunk costs a
// fraction of a statement per run (the per-call cost of database/sql, the
// driver and the VM is paid once per chunk), and 100 runs bind 501
// parameters, far below SQLite's limit.
const enqueueChunk = 100

// enqueueChunkMin is the fewest runs worth runInsertChunkSQL: a shorter
// stretch of keyless runs is inserted run by run with runInsertSQL, which
// binds 7 parameters instead of the padded chunk's 501 (measured, the two
// cost about the same at three runs; one run alone costs less than half
// of a padded chunk).
const enqueueChunkMin = 4

// runInsertChunkSQL inserts up to enqueueChunk available runs without a
// unique key, in slot order, and returns their ids. Parameter 1 is the
// creation time; run i (from 0) binds parameters 5i+2 … 5i+6 as queue,
// payload, priority, max_attempts and scheduled_at. A chunk that is not
// full is padded with NULL queues, which the WHERE drops, so one prepared
// statement serves every size. There is no ON CONFLICT: a run without a
// key cannot conflict, and any constraint failure is an error.
//
// Every column is written explicitly, none left to its default, so the
// caller builds each run from its input and the returned id (chunkRun)
// instead of scanning sixteen columns back: most of a chunk's cost when
// it returned them. Rows are inserted in slot order (ORDER BY), so the
// AUTOINCREMENT ids ascend in it; RETURNING has no order, so the caller
// sorts the ids.
//
// The parameters are anonymous (?, numbered in the order they appear), not
// ?NNN: modernc.org/sqlite looks up every parameter's name when binding,
// and for numbered ones that lookup scans the statement's list of names,
// quadratic in their number (a sixth of a chunk's CPU at 501 of them).
var runInsertChunkSQL = func() string {
	var b strings.Builder
	b.WriteString(`INSERT INTO runs (queue, payload, priority, state, attempt, max_attempts, fence, owner,
	scheduled_at, expires_at, unique_key, reason, result, created_at, finished_at, snoozes, reclaimed_at)
SELECT v.column2, v.column3, v.column4, 'available', 0, v.column5, 0, '',
	v.column6, NULL, '', '', NULL, ?, NULL, 0, NULL
FROM (VALUES `)
	for i := range enqueueChunk {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, ?, ?, ?, ?, ?)", i)
	}
	b.WriteString(`) AS v
WHERE v.column2 IS NOT NULL
ORDER BY v.column1
RETURNING id`)
	return b.String()
}()

// chunkRun is the run runInsertChunkSQL wrote for e under id: exactly what
// scanRun would read back.
func chunkRun(id int64, e *runs.Enqueue, now, scheduled int64) *driver.Run {
	return &driver.Run{ID: id, Queue: e.Queue, Payload: e.Payload, Priority: e.Priority,
		State: runs.StateAvailable, MaxAttempts: e.MaxAttempts, ScheduledAt: fromMicros(scheduled),
		CreatedAt: fromMicros(now)}
}

// RunEnqueue implements driver.RunStore. The batch is written in one
// writer transaction (one fsync), shared with the worker's claims and
// completions queued beside it (group.go), in input order: each stretch of runs
// without a unique key goes in with one runInsertChunkSQL per
// enqueueChunk runs, each run with a key with runInsertSQL, so ids ascend
// in input order and a key repeated within the batch goes to its first
// run. Two enqueues racing for one unique key serialize on the writer
// lock, so the second's INSERT sees the first's row, inserts nothing, and
// reads that row back as Existing.
func (d *store) RunEnqueue(ctx context.Context, p *driver.RunEnqueueParams) ([]driver.RunEnqueued, error) {
	es := p.Runs // valid, defaults filled, payloads compact: driver.Validating
	if len(es) == 0 {
		return nil, nil
	}
	// Prepared before BeginTx: see runPrepared.
	st, err := d.runPrepared(ctx)
	if err != nil {
		return nil, err
	}
	var out []driver.RunEnqueued
	err = d.inGroupTx(ctx, "enqueueing runs", func(ctx context.Context, tx *sql.Tx) error {
		w := enqueueWriter{ctx: ctx, es: es, out: make([]driver.RunEnqueued, len(es)), st: st, tx: tx,
			now: journal.NormalizeTime(d.clock.Now()).UnixMicro()} // read under the writer lock
		out = w.out
		return w.write()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// enqueueWriter writes one RunEnqueue batch inside its transaction.
type enqueueWriter struct {
	ctx           context.Context
	es            []runs.Enqueue
	out           []driver.RunEnqueued
	st            *runStmts // nil in the caller's transaction: see bind
	tx            *sql.Tx
	now           int64     // the store time, Unix microseconds
	insert, byKey *sql.Stmt // bound to tx on first use
	insertChunk   *sql.Stmt
	chunkArgs     []any
	boxed         chunkBoxes
	ids           []int64
}

// chunkBoxes hands a chunk's parameters out boxed, reusing the last box
// while the value repeats. Storing a string, a non-empty []byte or an int64
// of 256 or more in an interface allocates; a batch's runs mostly share
// their queue, their payload and (undelayed) their scheduled time, so one
// box serves the run after run that repeat it: three allocations a run
// fewer in the enqueue of a producer's batch (docs/BENCHMARKS.md, stop 27).
// Sharing a box is safe: a bound value is copied into SQLite when the
// statement runs.
type chunkBoxes struct {
	q      string
	qBox   any
	p      []byte
	pBox   any
	at     int64
	atBox  any
	primed bool
}

func (b *chunkBoxes) queue(q string) any {
	if b.qBox == nil || q != b.q {
		b.q, b.qBox = q, q
	}
	return b.qBox
}

func (b *chunkBoxes) payload(p []byte) any {
	if b.pBox == nil || !bytes.Equal(p, b.p) || (p == nil) != (b.p == nil) {
		b.p, b.pBox = p, p
	}
	return b.pBox
}

func (b *chunkBoxes) scheduled(now int64, delay time.Duration) any {
	at := now + delay.Microseconds()
	if !b.primed || at != b.at {
		b.at, b.atBox, b.primed = at, at, true
	}
	return b.atBox
}

// bind returns the cached statement bound to the transaction, or, with no
// cache (RunEnqueueTx), text prepared on the transaction itself: the
// caller's transaction may hold the one writer connection, which preparing
// through the cache would wait for forever.
func (w *enqueueWriter) bind(cached func(*runStmts) *sql.Stmt, text string) (*sql.Stmt, error) {
	if w.st != nil {
		return w.tx.StmtContext(w.ctx, cached(w.st)), nil
	}
	return w.tx.PrepareContext(w.ctx, text)
}

func (w *enqueueWriter) fail(i int, err error) error {
	return fmt.Errorf("sqlite: enqueueing run %d of %d on %q: %w", i+1, len(w.es), w.es[i].Queue, err)
}

// write inserts the batch in input order: each stretch of runs without a
// unique key in chunks, each run with a key on its own.
func (w *enqueueWriter) write() error {
	es := w.es
	for i := 0; i < len(es); {
		if es[i].UniqueKey != "" {
			if err := w.one(i); err != nil {
				return err
			}
			i++
			continue
		}
		j := i + 1
		for j < len(es) && es[j].UniqueKey == "" {
			j++
		}
		if err := w.keyless(i, j); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// one inserts run i with runInsertSQL; if its unique key is taken, the
// result is the run that holds it.
func (w *enqueueWriter) one(i int) error {
	if w.insert == nil {
		var err error
		if w.insert, err = w.bind(func(s *runStmts) *sql.Stmt { return s.insert }, runInsertSQL); err != nil {
			return w.fail(i, err)
		}
		if w.byKey, err = w.bind(func(s *runStmts) *sql.Stmt { return s.selectByKey }, runSelectByKeySQL); err != nil {
			return w.fail(i, err)
		}
	}
	e := &w.es[i]
	mask, bucket := e.UniqueMask(), e.UniqueBucket(w.now)
	if e.UniqueKey == "" {
		mask = keylessUniqueStates
	}
	r, err := scanRun(w.insert.QueryRowContext(w.ctx, e.Queue, e.Payload, e.Priority, e.MaxAttempts,
		w.now+e.Delay.Microseconds(), e.UniqueKey, w.now, mask, bucket))
	if errors.Is(err, sql.ErrNoRows) && e.UniqueKey != "" {
		w.out[i].Existing = true
		r, err = scanRun(w.byKey.QueryRowContext(w.ctx, e.UniqueKey, bucket))
	}
	if err != nil {
		return w.fail(i, err)
	}
	w.out[i].Run = r
	return nil
}

// keyless inserts runs [from, to), none of which has a unique key.
func (w *enqueueWriter) keyless(from, to int) error {
	if to-from < enqueueChunkMin {
		for i := from; i < to; i++ {
			if err := w.one(i); err != nil {
				return err
			}
		}
		return nil
	}
	if w.insertChunk == nil {
		var err error
		if w.insertChunk, err = w.bind(func(s *runStmts) *sql.Stmt { return s.insertChunk }, runInsertChunkSQL); err != nil {
			return fmt.Errorf("sqlite: enqueueing runs %d to %d of %d: %w", from+1, to, len(w.es), err)
		}
		w.chunkArgs = make([]any, 1+5*enqueueChunk)
		w.chunkArgs[0] = w.now
	}
	for c := from; c < to; c += enqueueChunk {
		if err := w.chunk(c, min(c+enqueueChunk, to)); err != nil {
			return fmt.Errorf("sqlite: enqueueing runs %d to %d of %d: %w", c+1, min(c+enqueueChunk, to), len(w.es), err)
		}
	}
	return nil
}

// chunk inserts runs [from, to), at most enqueueChunk of them without a
// unique key, with one runInsertChunkSQL.
func (w *enqueueWriter) chunk(from, to int) error {
	for k := range enqueueChunk {
		a := w.chunkArgs[1+5*k : 6+5*k]
		if i := from + k; i < to {
			e := &w.es[i]
			a[0], a[1], a[2], a[3], a[4] = w.boxed.queue(e.Queue), w.boxed.payload(e.Payload), e.Priority, e.MaxAttempts, w.boxed.scheduled(w.now, e.Delay)
		} else {
			a[0], a[1], a[2], a[3], a[4] = nil, nil, nil, nil, nil
		}
	}
	rows, err := w.insertChunk.QueryContext(w.ctx, w.chunkArgs...)
	if err != nil {
		return err
	}
	ids := w.ids[:0]
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	w.ids = ids
	if len(ids) != to-from {
		return fmt.Errorf("the insert returned %d ids for %d runs", len(ids), to-from)
	}
	slices.Sort(ids)
	for k, id := range ids {
		if k > 0 && id == ids[k-1] {
			return fmt.Errorf("the insert returned id %d twice", id)
		}
		i := from + k
		w.out[i].Run = chunkRun(id, &w.es[i], w.now, w.now+w.es[i].Delay.Microseconds())
	}
	return nil
}
