package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/leasehold/driver"
)

// claimRunsPlain is the claim of a queue that nothing pauses or limits:
// the claim statement as it was before the queue registry, and a guard —
// one primary-key probe of queues, evaluated once — that makes it claim
// nothing from a queue that has a registry row pausing or limiting it.
// FOR UPDATE SKIP LOCKED makes concurrent claimers pass over each other's
// picks instead of waiting for them, so no run is claimed twice; a pick
// another claimer committed first is re-checked on its new version (no
// longer available) and dropped. counted = false: a queue with no
// controls has no concurrency count to be in (migration 0017). The new fence, greatest(fence, floor)+1,
// fences out every earlier holder, also one a promoted standby never heard
// of (fencefloor.go). RunClaim tries it first (see claim below), so a busy queue without
// controls pays one index probe for them.
//
// The UPDATE finds c's picks by their ids as an array, a primary-key
// lookup per pick, as claimRunsControlled does. Joined to c (FROM c …
// WHERE r.id = c.id) it was planned, for a wide worker's batch (1,000
// picks of 20,000 runs), as a Hash Join over a Seq Scan of runs: every
// claim read and hashed the whole table, a third of the server's CPU in a
// drain (TestWideRunBatchesFindTheirRowsByKey).
const claimRunsPlain = `WITH ` + storeNowSQL + `, ` + fenceFloorSQL + `, c AS (
    SELECT id FROM runs
    WHERE queue = $2 AND state = 'available' AND scheduled_at <= (SELECT now FROM t)
      AND NOT EXISTS (SELECT 1 FROM queues
                      WHERE name = $2 AND (paused OR max_running IS NOT NULL OR rate_limit IS NOT NULL))
    ORDER BY priority, scheduled_at, id
    LIMIT $3
    FOR UPDATE SKIP LOCKED
)
UPDATE runs r SET state = 'running', owner = $4, fence = greatest(r.fence, fl.floor) + 1, attempt = r.attempt + 1,
    expires_at = t.now + $5::interval, counted = false
FROM t, fl
WHERE r.id = ANY (ARRAY(SELECT id FROM c))
RETURNING ` + runColumnsR

// lockLimitedQueue is the controlled claim's first statement: it locks a queue's
// registry row FOR UPDATE when the queue has a concurrency or rate limit,
// and matches (and locks) nothing otherwise. Claims of a limited queue are
// so serialized on its row, and the claim statement that follows in the
// same implicit transaction (one pgx batch, one round trip) takes its own
// snapshot after the lock is granted: it counts every claim, completion
// and start that committed before, so two claimers never both see the
// last free slot. A claim's count inside a single statement that took the
// lock itself would read the snapshot from before the wait, and could.
const lockLimitedQueue = `SELECT 1 FROM queues
WHERE name = $1 AND (max_running IS NOT NULL OR rate_limit IS NOT NULL)
FOR UPDATE`

// claimRunsControlled is the claim under a queue's registry row, right
// for any queue (SKIP LOCKED and the fence as in claimRunsPlain). b is the batch the queue
// allows: $3 for a queue without a registry row (or with one that neither
// pauses nor limits it — then no count is made, CASE evaluates lazily), 0
// while paused, else $3 cut to the global concurrency limit less the runs
// running now and to the rate limit less the starts inside the window
// (now - period, now]. c picks at most that many with FOR UPDATE SKIP
// LOCKED, u claims them (by their ids as an array: c's LIMIT is not
// known when planning, and a join with c was planned as a hash of the
// whole runs table — 30 ms a claim at 20,000 runs — where the array is a
// primary-key lookup per pick), s records each claim of a rate-limited queue as a
// start and p drops the starts that left the window — one statement. A
// run still running under an expired lease counts as running until the
// reclaimer returns it, so the limit holds under the reclaimer too.
//
// The count reads runs_running_counted (migration 0017): the running runs
// claimed while the queue was limited (u sets counted), and those
// QueueSetLimits marked when it limited the queue (queues.go) — every
// running run of a limited queue, without an index entry per claim for
// the queues that are not limited.
const claimRunsControlled = `WITH ` + storeNowSQL + `, ` + fenceFloorSQL + `,
q AS (SELECT paused, max_running, rate_limit, rate_period_us * interval '1 microsecond' AS period
      FROM queues WHERE name = $2),
b AS (SELECT CASE WHEN q.paused THEN 0 ELSE greatest(0, least($3,
        CASE WHEN q.max_running IS NULL THEN $3
             ELSE q.max_running - (SELECT count(*) FROM runs WHERE queue = $2 AND state = 'running' AND counted) END,
        CASE WHEN q.rate_limit IS NULL THEN $3
             ELSE q.rate_limit - (SELECT count(*) FROM queue_starts s
                                  WHERE s.queue = $2 AND s.started_at > t.now - q.period) END)) END AS n
      FROM q, t),
c AS (
    SELECT id FROM runs
    WHERE queue = $2 AND state = 'available' AND scheduled_at <= (SELECT now FROM t)
    ORDER BY priority, scheduled_at, id
    LIMIT coalesce((SELECT n FROM b), $3)
    FOR UPDATE SKIP LOCKED
),
u AS (
    UPDATE runs r SET state = 'running', owner = $4, fence = greatest(r.fence, fl.floor) + 1, attempt = r.attempt + 1,
        expires_at = t.now + $5::interval, counted = coalesce((SELECT q.max_running IS NOT NULL FROM q), false)
    FROM t, fl
    WHERE r.id = ANY (ARRAY(SELECT id FROM c))
    RETURNING ` + runColumnsR + `
),
s AS (
    INSERT INTO queue_starts (queue, started_at, run_id)
    SELECT $2, t.now, u.id FROM u, t, q WHERE q.rate_limit IS NOT NULL
),
p AS (
    DELETE FROM queue_starts x USING q, t
    WHERE q.rate_limit IS NOT NULL AND x.queue = $2 AND x.started_at <= t.now - q.period
)
SELECT * FROM u`

// claim picks the path. A queue without controls: claimRunsPlain, one
// round trip; if it claims nothing (an idle queue, or one its registry row
// pauses or limits, which the plain statement leaves alone), the
// controlled claim. A queue whose last controlled claim found it limited
// (the hint d.limited) goes to the controlled claim at once, saving the
// plain statement's round trip on every claim. The hint only picks the
// path: both statements are right for any queue, so a stale hint costs a
// round trip, never a limit.
func (d *store) claim(ctx context.Context, conn *pgxpool.Conn, p *driver.RunClaimParams) ([]*driver.Run, error) {
	if _, limited := d.limited.Load(p.Queue); !limited {
		rows, err := conn.Query(ctx, plantedFloorBug(claimRunsPlain), d.fakeNow(), p.Queue, p.Limit, p.Owner, p.Lease)
		if err != nil {
			return nil, err
		}
		out, err := scanRuns(rows)
		if err != nil || len(out) > 0 {
			return out, err
		}
	}
	return d.claimControlled(ctx, conn, p)
}

// claimControlled is the claim of a queue its registry row may pause or
// limit: two statements, one round trip, one implicit transaction (a pgx
// batch ends with one Sync) — the lock of a limited queue's row, then
// claimRunsControlled under it. Whether the lock found the queue limited
// updates the hint.
func (d *store) claimControlled(ctx context.Context, conn *pgxpool.Conn, p *driver.RunClaimParams) (out []*driver.Run, err error) {
	b := &pgx.Batch{}
	b.Queue(lockLimitedQueue, p.Queue)
	b.Queue(plantedFloorBug(claimRunsControlled), d.fakeNow(), p.Queue, p.Limit, p.Owner, p.Lease)
	br := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			out, err = nil, cerr
		}
	}()
	tag, err := br.Exec()
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() > 0 {
		d.limited.Store(p.Queue, struct{}{})
	} else {
		d.limited.Delete(p.Queue)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	return scanRuns(rows)
}
