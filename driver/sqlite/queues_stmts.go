package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// queueStmts are the queue control statements the claim runs on every
// call, prepared once on the writer connection (as runStmts are, and for
// the same reason). A cache of its own, so the run statements do not
// depend on the queues table.
type queueStmts struct {
	control, claimLimited, insertStart, pruneStarts *sql.Stmt
}

// queueControlSQL reads a queue's registry row: what RunClaim must honour.
const queueControlSQL = `SELECT paused, max_running, rate_limit, rate_period_us FROM queues WHERE name = ?`

// runClaimLimitedSQL is runClaimSQL for a queue with a registry row: the
// LIMIT is the batch, cut to what the queue's limits leave — the global
// concurrency limit less the runs running now, the rate limit less the
// starts inside the window (now - period, now] — and 0 while paused. It is
// computed in the statement, under the single writer, so no other claim
// (of any process) can come between the count and the take.
const runClaimLimitedSQL = `UPDATE runs SET
    state = 'running', owner = ?1, fence = fence + 1, attempt = attempt + 1, expires_at = ?2
WHERE id IN (
    SELECT id FROM runs
    WHERE queue = ?3 AND state = 'available' AND scheduled_at <= ?4
    ORDER BY priority, scheduled_at, id
    LIMIT coalesce((SELECT CASE WHEN q.paused THEN 0 ELSE max(0, min(?5,
        CASE WHEN q.max_running IS NULL THEN ?5
             ELSE q.max_running - (SELECT count(*) FROM runs WHERE queue = ?3 AND state = 'running') END,
        CASE WHEN q.rate_limit IS NULL THEN ?5
             ELSE q.rate_limit - (SELECT count(*) FROM queue_starts s
                                  WHERE s.queue = ?3 AND s.started_at > ?4 - q.rate_period_us) END)) END
        FROM queues q WHERE q.name = ?3), ?5))
RETURNING ` + claimedColumns

type queueStmtCache struct {
	mu sync.Mutex // guards s; held only while preparing
	s  *queueStmts
}

// queuePrepared returns the prepared queue statements, preparing them on
// first use. Call it before BeginTx (see runPrepared).
func (d *store) queuePrepared(ctx context.Context) (*queueStmts, error) {
	d.queueStmts.mu.Lock()
	defer d.queueStmts.mu.Unlock()
	if d.queueStmts.s != nil {
		return d.queueStmts.s, nil
	}
	var s queueStmts
	if err := prepareAll(ctx, d.w, "queue statements", []stmtSQL{
		{&s.control, queueControlSQL},
		{&s.claimLimited, runClaimLimitedSQL},
		{&s.insertStart, `INSERT INTO queue_starts (queue, started_at, run_id) VALUES (?, ?, ?)`},
		{&s.pruneStarts, `DELETE FROM queue_starts WHERE queue = ? AND started_at <= ?`},
	}); err != nil {
		return nil, err
	}
	d.queueStmts.s = &s
	return &s, nil
}

func (s *queueStmts) close() {
	for _, st := range []*sql.Stmt{s.control, s.claimLimited, s.insertStart, s.pruneStarts} {
		if st != nil {
			st.Close()
		}
	}
}

// closeQueueStmts closes the prepared queue statements (at Close).
func (d *store) closeQueueStmts() {
	d.queueStmts.mu.Lock()
	defer d.queueStmts.mu.Unlock()
	if d.queueStmts.s != nil {
		d.queueStmts.s.close()
		d.queueStmts.s = nil
	}
}
