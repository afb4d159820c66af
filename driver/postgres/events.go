package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// appendEvents inserts a group-committed batch of events of any number of
// runs in one statement: the batch arrives as column arrays ($3–$7,
// unnested in step) and each event is kept only if its run is running
// under the event's fence.
//
// r locks the batch's run rows FOR SHARE, as every effect write does, and
// holds the lock to commit. Without it the check would be against the
// statement's snapshot: a reclaim or cancel committing while the insert
// runs would let events of the old fence commit after the run moved on —
// after the next holder's first events, and behind the cursor of a
// subscriber that already read those. With it, a fence change of the run
// commits wholly before the batch (whose events of that run are then
// refused) or after it. Shared locks do not conflict with one another or
// with the FOR SHARE of the effect writes; the run writes that conflict
// (complete, fail, block, cancel, renew) lock one row each, and the
// multi-row lockers (claim, reclaim) skip locked rows, so the lock waits
// cannot form a cycle. ORDER BY id takes the locks in one global order all
// the same, for any future multi-row locker that waits instead of
// skipping. The lock costs one small WAL record per distinct run of the
// batch; ORDER BY and FOR SHARE also keep r a CTE of its own, so the
// planner cannot fold the run lookup into a per-event loop.
//
// The store time is read once for the batch.
//
// The statement also wakes listeners of other processes (RunEventsNotify):
// n sends one notification per chunk of the distinct runs that got events
// ($8 is the channel, eventsChannel), their ids as a comma list. Postgres
// delivers notifications only at commit, so no listener wakes before the
// events are durable, and a failed statement notifies nothing. The insert
// is a CTE so n can read what it returned; the statement answers with the
// number of rows inserted (and of notifications sent, which only makes the
// statement evaluate n).
const appendEvents = `WITH ` + storeNowSQL + `,
r AS (
    SELECT id, fence FROM runs WHERE id = ANY($2::bigint[]) AND state = 'running'
    ORDER BY id
    FOR SHARE
),
ins AS (
    INSERT INTO run_events (run_id, fence, seq, kind, payload, created_at)
    SELECT e.run_id, e.fence, e.seq, e.kind, e.payload, t.now
    FROM unnest($3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::bytea[]) AS e(run_id, fence, seq, kind, payload)
    JOIN r ON r.id = e.run_id AND r.fence = e.fence
    CROSS JOIN t` + onConflictMark + `
    RETURNING run_id
),
n AS (
    SELECT pg_notify($8, string_agg(c.run_id::text, ',' ORDER BY c.run_id))
    FROM (SELECT d.run_id, (row_number() OVER (ORDER BY d.run_id) - 1) / ` + notifyChunkSQL + ` AS chunk
          FROM (SELECT DISTINCT run_id FROM ins) d) c
    GROUP BY c.chunk
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM n)`

// onConflictMark is where appendEventsIdempotent puts its ON CONFLICT.
const onConflictMark = `
    -- on conflict`

// notifyChunkSQL is the most run ids one notification carries: 20 bytes
// each at most (19 digits and a comma), well under the 8000-byte payload
// limit of NOTIFY.
const notifyChunkSQL = "300"

// appendEventsIdempotent is appendEvents for a batch some of whose keys
// are stored already (a retried batch) or repeated within it: ON CONFLICT
// DO NOTHING inserts each key once. appendEvents goes without it because
// the speculative insertion ON CONFLICT needs costs a quarter of the
// throughput (an extra WAL record and index probe per row); a key
// conflict makes it fail as a whole, writing nothing, and the batch is
// sent again as this. Retries are rare (a lost answer, a timeout), so the
// price is paid rarely: the extra round trip, and pgx preparing the plain
// statement again after it failed.
var appendEventsIdempotent = strings.Replace(appendEvents, onConflictMark, `
    ON CONFLICT (run_id, fence, seq) DO NOTHING`, 1)

// unstoredEvents lists the batch's events (by 1-based ordinal) whose key
// is not stored: after appendEvents, exactly the fenced ones. An event not
// inserted because its key already existed (a retried batch, a repeat
// within the batch) is stored, so it counts as accepted.
const unstoredEvents = `SELECT e.i FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS e(run_id, fence, seq, i)
WHERE NOT EXISTS (SELECT 1 FROM run_events x WHERE x.run_id = e.run_id AND x.fence = e.fence AND x.seq = e.seq)
ORDER BY e.i`

// eventColumns are the run_events columns an event list returns.
const eventColumns = `run_id, fence, seq, kind, payload, created_at`

// listEvents reads a run's events after (fence, seq) in key order; the row
// comparison is a range scan of the primary key.
const listEvents = `SELECT ` + eventColumns + ` FROM run_events
WHERE run_id = $1 AND (fence, seq) > ($2, $3)
ORDER BY fence, seq
LIMIT $4`

// listQueueEvents reads a queue's events after a cursor in (txid, run,
// fence, seq) order — a range scan of run_events_txid (txid, run_id) from
// the cursor's (transaction, run), each (txid, run_id) group sorted by
// (fence, seq) by an incremental sort (one run's events of one
// transaction: migration 0019), joined to each event's run — each with
// whether it is listable: its transaction older than every transaction
// still running (migration 0016). A transaction that began before a later
// one may still commit, and its events would sort before the cursor a
// reader takes from this page. Listable rows come first in this order
// (txid < xmin is monotone in txid), so the list stops at the first that
// is not, and reports the rest pending.
const listQueueEvents = `SELECT e.txid::text::bigint, e.run_id, e.fence, e.seq, e.kind, e.payload, e.created_at,
       e.txid < pg_snapshot_xmin(pg_current_snapshot())
FROM run_events e JOIN runs r ON r.id = e.run_id
WHERE r.queue = $1
  AND (e.txid, e.run_id, e.fence, e.seq) > ($2::text::xid8, $3, $4, $5)
ORDER BY e.txid, e.run_id, e.fence, e.seq
LIMIT $6`

// eventBatch is a validated batch as column arrays, the shape appendEvents
// unnests.
type eventBatch struct {
	runIDs, fences, seqs []int64
	kinds                []string
	payloads             [][]byte
	distinctRuns         []int64 // sorted
}

// eventArrays splits a batch (valid, payloads compact: driver.Validating)
// into the arrays the statements unnest.
func eventArrays(evs []driver.RunEventInsert) *eventBatch {
	n := len(evs)
	b := &eventBatch{runIDs: make([]int64, n), fences: make([]int64, n), seqs: make([]int64, n),
		kinds: make([]string, n), payloads: make([][]byte, n)}
	for i := range evs {
		e := &evs[i]
		b.runIDs[i], b.fences[i], b.seqs[i], b.kinds[i], b.payloads[i] = e.RunID, e.Fence, e.Seq, e.Kind, e.Payload
	}
	b.distinctRuns = slices.Compact(slices.Sorted(slices.Values(b.runIDs)))
	return b
}

// RunEventAppend implements driver.EffectStore: DurableBatched, on the
// general pool. The batch is one statement in autocommit — one round trip,
// one commit — when no key is stored yet (the common case); a batch with a
// stored or repeated key costs one more, appendEventsIdempotent. When
// fewer events were inserted than the batch holds (fenced events, or keys
// already stored) one more round trip asks which of the batch's keys are
// not stored; those are the fenced ones. The same statement notifies the
// batch's runs to RunEventsNotify listeners, delivered at its commit.
func (d *store) RunEventAppend(ctx context.Context, p *driver.RunEventAppendParams) (*driver.RunEventAppendResult, error) {
	b := eventArrays(p.Events)
	res := &driver.RunEventAppendResult{}
	if len(p.Events) == 0 {
		return res, nil
	}
	fail := func(err error) error {
		return fmt.Errorf("postgres: appending %d run events: %w", len(p.Events), withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	args := []any{d.fakeNow(), b.distinctRuns, b.runIDs, b.fences, b.seqs, b.kinds, b.payloads, d.eventsChannel()}
	var inserted, notified int64
	err = conn.QueryRow(ctx, appendEvents, args...).Scan(&inserted, &notified)
	if isUniqueViolation(err) {
		err = conn.QueryRow(ctx, appendEventsIdempotent, args...).Scan(&inserted, &notified)
	}
	if err != nil {
		return nil, fail(err)
	}
	if inserted == int64(len(p.Events)) {
		return res, nil
	}
	rows, err := conn.Query(ctx, unstoredEvents, b.runIDs, b.fences, b.seqs)
	if err != nil {
		return nil, fail(fmt.Errorf("finding the fenced events: %w", err))
	}
	defer rows.Close()
	for rows.Next() {
		var i int64
		if err := rows.Scan(&i); err != nil {
			return nil, fail(err)
		}
		res.Fenced = append(res.Fenced, int(i-1))
	}
	if err := rows.Err(); err != nil {
		return nil, fail(fmt.Errorf("finding the fenced events: %w", err))
	}
	return res, nil
}

// RunEventListQueue implements driver.QueueEventLister: a read, on the
// general pool.
func (d *store) RunEventListQueue(ctx context.Context, p *driver.RunEventListQueueParams) (*driver.QueueEventPage, error) {
	fail := func(err error) error {
		return fmt.Errorf("postgres: listing events of queue %q: %w", p.Queue, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	a := p.After
	rows, err := conn.Query(ctx, listQueueEvents, p.Queue, strconv.FormatInt(a.Pos, 10), a.RunID, a.Fence, a.Seq, p.Limit)
	if err != nil {
		return nil, fail(err)
	}
	defer rows.Close()
	var out driver.QueueEventPage
	for rows.Next() {
		var e driver.QueueEvent
		var created time.Time
		var listable bool
		if err := rows.Scan(&e.Pos, &e.RunID, &e.Fence, &e.Seq, &e.Kind, &e.Payload, &created, &listable); err != nil {
			return nil, fail(err)
		}
		if !listable {
			out.Pending = true
			break
		}
		e.CreatedAt = created.UTC()
		out.Events = append(out.Events, &e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fail(err)
	}
	return &out, nil
}

// RunEventList implements driver.EffectStore: a read, on the general pool.
// A run without events, or no run at all, lists nothing.
func (d *store) RunEventList(ctx context.Context, p *driver.RunEventListParams) ([]*driver.RunEvent, error) {
	limit := p.Limit // > 0: defaulted by driver.Validating
	fail := func(err error) error {
		return fmt.Errorf("postgres: listing events of run %d: %w", p.RunID, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, listEvents, p.RunID, p.AfterFence, p.AfterSeq, limit)
	if err != nil {
		return nil, fail(err)
	}
	defer rows.Close()
	var out []*driver.RunEvent
	for rows.Next() {
		var e driver.RunEvent
		var created time.Time
		if err := rows.Scan(&e.RunID, &e.Fence, &e.Seq, &e.Kind, &e.Payload, &created); err != nil {
			return nil, fail(err)
		}
		e.CreatedAt = created.UTC()
		out = append(out, &e)
	}
	if err := rows.Err(); err != nil {
		return nil, fail(err)
	}
	return out, nil
}
