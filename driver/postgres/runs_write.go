package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// The runner's fenced writes. Each is one conditional UPDATE whose WHERE
// carries the fence (and, for a renewal, the owner and a live expiry on the
// store clock): a runner whose run was reclaimed, cancelled, finished or
// claimed again matches no row and writes nothing. The fence itself is
// never written here: leaving running already fences the old holder out,
// and the next claim increments it.
const (
	// renewRun locks the run's row first (l) and compares its expiry with
	// clock_timestamp() read on l's output (k), so the clock is read with
	// the row locked: a renewal that waited for the lock — held FOR SHARE
	// by an effect's or a transaction's held-run check, which modifies
	// nothing, so Postgres would not re-evaluate a WHERE after the wait —
	// until the lease expired renews nothing (SPEC §2: never revive an
	// expired lease; TestRenewExpiredWhileWaitingForTheLock). k reads
	// only l's rows, each returned once locked; a CTE with a volatile
	// function is never folded into the UPDATE.
	renewRun = `WITH ` + storeNowSQL + `,
l AS (
    SELECT id, expires_at FROM runs
    WHERE id = $2 AND fence = $3 AND owner = $4 AND state = 'running'
    FOR NO KEY UPDATE
),
k AS (SELECT id AS locked_id FROM l WHERE expires_at > coalesce($1::timestamptz, clock_timestamp()))
UPDATE runs SET expires_at = t.now + $5::interval
FROM t, k
WHERE runs.id = k.locked_id AND fence = $3 AND owner = $4 AND state = 'running'
RETURNING ` + runColumns

	completeRun = `WITH ` + storeNowSQL + `
UPDATE runs SET state = 'completed', result = $4, finished_at = t.now, owner = '', expires_at = NULL
FROM t
WHERE id = $2 AND fence = $3 AND state = 'running'
RETURNING ` + runColumns

	// failRun reads attempt and max_attempts of the row being updated (SET
	// expressions all see the old row): a retry is scheduled after the
	// backoff, an exhausted run is final.
	failRun = `WITH ` + storeNowSQL + `
UPDATE runs SET
    state = CASE WHEN attempt >= max_attempts THEN 'failed' ELSE 'available' END,
    scheduled_at = CASE WHEN attempt >= max_attempts THEN scheduled_at ELSE t.now + $4::interval END,
    finished_at = CASE WHEN attempt >= max_attempts THEN t.now END,
    owner = '', expires_at = NULL, reason = $5
FROM t
WHERE id = $2 AND fence = $3 AND state = 'running'
RETURNING ` + runColumns

	// snoozeRun gives the attempt back (attempt - 1; the next claim adds
	// it again) and counts the snooze, bounded in the WHERE.
	snoozeRun = `WITH ` + storeNowSQL + `
UPDATE runs SET state = 'available', scheduled_at = t.now + $4::interval, attempt = attempt - 1,
    snoozes = snoozes + 1, owner = '', expires_at = NULL
FROM t
WHERE id = $2 AND fence = $3 AND state = 'running' AND snoozes < $5
RETURNING ` + runColumns

	blockRun = `WITH ` + storeNowSQL + `
UPDATE runs SET state = 'blocked', owner = '', expires_at = NULL, reason = $4
FROM t
WHERE id = $2 AND fence = $3 AND state = 'running'
RETURNING ` + runColumns
)

// The operator's writes: no fence, conditional on the state alone.
const (
	unblockRun = `WITH ` + storeNowSQL + `
UPDATE runs SET state = 'available', scheduled_at = t.now
FROM t
WHERE id = $2 AND state = 'blocked'
RETURNING ` + runColumns

	// cancelRun raises the fence (greatest(fence, floor)+1, fencefloor.go),
	// so a running holder is fenced out of every later write.
	cancelRun = `WITH ` + storeNowSQL + `, ` + fenceFloorSQL + `
UPDATE runs SET state = 'cancelled', fence = greatest(fence, fl.floor) + 1, owner = '', expires_at = NULL,
    finished_at = t.now, reason = $3
FROM t, fl
WHERE id = $2 AND state IN ('available', 'running', 'blocked')
RETURNING ` + runColumns
)

// fencedRefusal classifies a runner's refused write (driver.ClassifyRefusal).
func fencedRefusal(op string, id, fence int64, owner string, renew bool) refusal {
	return func(cur *driver.Run, now time.Time) error {
		return driver.ClassifyRefusal(op, id, fence, owner, cur, now, renew)
	}
}

// stateRefusal explains an operator's refused write: the run is missing,
// or in a state the write does not apply to.
func stateRefusal(op string, id int64) refusal {
	return func(cur *driver.Run, _ time.Time) error {
		if cur == nil {
			return fmt.Errorf("run %d: %w", id, driver.ErrNotFound)
		}
		return fmt.Errorf("%s of run %d refused: run is %s: %w", op, id, cur.State, driver.ErrConflict)
	}
}

// RunRenew implements driver.RunStore.
func (d *store) RunRenew(ctx context.Context, p *driver.RunRenewParams) (*driver.Run, error) {
	return d.runWrite(ctx, "renew", p.ID, critical(p), renewRun,
		[]any{d.fakeNow(), p.ID, p.Fence, p.Owner, p.Lease}, fencedRefusal("renew", p.ID, p.Fence, p.Owner, true))
}

// RunComplete implements driver.RunStore. A result is optional (NULL when
// none is given) and is stored as compact JSON.
func (d *store) RunComplete(ctx context.Context, p *driver.RunCompleteParams) (*driver.Run, error) {
	result := p.Result // compact, or nil for SQL NULL: driver.Validating
	return d.runWrite(ctx, "complete", p.ID, critical(p), completeRun,
		[]any{d.fakeNow(), p.ID, p.Fence, result}, fencedRefusal("complete", p.ID, p.Fence, "", false))
}

// RunFail implements driver.RunStore.
func (d *store) RunFail(ctx context.Context, p *driver.RunFailParams) (*driver.Run, error) {
	return d.runWrite(ctx, "fail", p.ID, critical(p), failRun,
		[]any{d.fakeNow(), p.ID, p.Fence, p.RetryAfter, p.Reason}, fencedRefusal("fail", p.ID, p.Fence, "", false))
}

// RunSnooze implements driver.RunStore.
func (d *store) RunSnooze(ctx context.Context, p *driver.RunSnoozeParams) (*driver.Run, error) {
	return d.runWrite(ctx, "snooze", p.ID, critical(p), snoozeRun,
		[]any{d.fakeNow(), p.ID, p.Fence, p.Delay, p.MaxSnoozes}, func(cur *driver.Run, now time.Time) error {
			return driver.ClassifySnoozeRefusal(p, cur, now)
		})
}

// RunBlock implements driver.RunStore.
func (d *store) RunBlock(ctx context.Context, p *driver.RunBlockParams) (*driver.Run, error) {
	return d.runWrite(ctx, "block", p.ID, critical(p), blockRun,
		[]any{d.fakeNow(), p.ID, p.Fence, p.Reason}, fencedRefusal("block", p.ID, p.Fence, "", false))
}

// RunUnblock implements driver.RunStore.
func (d *store) RunUnblock(ctx context.Context, p *driver.RunUnblockParams) (*driver.Run, error) {
	return d.runWrite(ctx, "unblock", p.ID, critical(p), unblockRun,
		[]any{d.fakeNow(), p.ID}, stateRefusal("unblock", p.ID))
}

// RunCancel implements driver.RunStore.
func (d *store) RunCancel(ctx context.Context, p *driver.RunCancelParams) (*driver.Run, error) {
	return d.runWrite(ctx, "cancel", p.ID, critical(p), plantedFloorBug(cancelRun),
		[]any{d.fakeNow(), p.ID, p.Reason}, stateRefusal("cancel", p.ID))
}
