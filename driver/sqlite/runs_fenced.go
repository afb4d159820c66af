package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// The runner's writes. Each is accepted only WHERE id = ?id AND fence =
// ?fence AND state = 'running': a runner whose run was reclaimed, cancelled
// or claimed again matches no row and changes nothing. Each releases or
// keeps the lease but never changes the fence: leaving 'running' already
// fences the old holder out, and the next claim increments it.

// runRenewSQL is the synchronous heartbeat. owner and expires_at > now in
// the WHERE: it never renews another holder's claim and never revives a
// lease that expired (the reclaimer may be about to take it).
const runRenewSQL = `UPDATE runs SET expires_at = ?1
WHERE id = ?2 AND fence = ?3 AND state = 'running' AND owner = ?4 AND expires_at > ?5
RETURNING ` + runColumns

const runCompleteSQL = `UPDATE runs SET
    state = 'completed', result = ?1, finished_at = ?2, owner = '', expires_at = NULL
WHERE id = ?3 AND fence = ?4 AND state = 'running'
RETURNING ` + runColumns

// runFailSQL: SET expressions read the row as it was before the UPDATE, so
// attempt is the attempt that just failed.
const runFailSQL = `UPDATE runs SET
    state        = CASE WHEN attempt >= max_attempts THEN 'failed' ELSE 'available' END,
    scheduled_at = CASE WHEN attempt >= max_attempts THEN scheduled_at ELSE ?1 END,
    finished_at  = CASE WHEN attempt >= max_attempts THEN ?2 END,
    owner = '', expires_at = NULL, reason = ?3
WHERE id = ?4 AND fence = ?5 AND state = 'running'
RETURNING ` + runColumns

// runSnoozeSQL gives the attempt back (attempt - 1; the next claim adds
// it again) and counts the snooze, bounded in the WHERE.
const runSnoozeSQL = `UPDATE runs SET state = 'available', scheduled_at = ?1, attempt = attempt - 1,
    snoozes = snoozes + 1, owner = '', expires_at = NULL
WHERE id = ?2 AND fence = ?3 AND state = 'running' AND snoozes < ?4
RETURNING ` + runColumns

const runBlockSQL = `UPDATE runs SET state = 'blocked', owner = '', expires_at = NULL, reason = ?1
WHERE id = ?2 AND fence = ?3 AND state = 'running'
RETURNING ` + runColumns

// RunRenew implements driver.RunStore.
func (d *store) RunRenew(ctx context.Context, p *driver.RunRenewParams) (*driver.Run, error) {
	return d.updateRun(ctx, runUpdate{op: "renew", id: p.ID,
		stmt: func(s *runStmts) *sql.Stmt { return s.renew },
		args: func(now time.Time) []any {
			return []any{now.Add(p.Lease).UnixMicro(), p.ID, p.Fence, p.Owner, now.UnixMicro()}
		},
		refuse: fencedRefusal("renew", p.ID, p.Fence, p.Owner, true)})
}

// RunComplete implements driver.RunStore. A result is optional; none is
// stored as NULL.
func (d *store) RunComplete(ctx context.Context, p *driver.RunCompleteParams) (*driver.Run, error) {
	result := p.Result // compact, or nil for SQL NULL: driver.Validating
	return d.updateRun(ctx, runUpdate{op: "complete", id: p.ID,
		stmt: func(s *runStmts) *sql.Stmt { return s.complete },
		args: func(now time.Time) []any {
			return []any{nullBytes(result), now.UnixMicro(), p.ID, p.Fence}
		},
		refuse: fencedRefusal("complete", p.ID, p.Fence, "", false)})
}

// RunFail implements driver.RunStore.
func (d *store) RunFail(ctx context.Context, p *driver.RunFailParams) (*driver.Run, error) {
	return d.updateRun(ctx, runUpdate{op: "fail", id: p.ID,
		stmt: func(s *runStmts) *sql.Stmt { return s.fail },
		args: func(now time.Time) []any {
			return []any{now.Add(p.RetryAfter).UnixMicro(), now.UnixMicro(), p.Reason, p.ID, p.Fence}
		},
		refuse: fencedRefusal("fail", p.ID, p.Fence, "", false)})
}

// RunSnooze implements driver.RunStore.
func (d *store) RunSnooze(ctx context.Context, p *driver.RunSnoozeParams) (*driver.Run, error) {
	return d.updateRun(ctx, runUpdate{op: "snooze", id: p.ID,
		stmt: func(s *runStmts) *sql.Stmt { return s.snooze },
		args: func(now time.Time) []any {
			return []any{now.Add(p.Delay).UnixMicro(), p.ID, p.Fence, p.MaxSnoozes}
		},
		refuse: func(cur *driver.Run, now time.Time) error { return driver.ClassifySnoozeRefusal(p, cur, now) }})
}

// RunBlock implements driver.RunStore.
func (d *store) RunBlock(ctx context.Context, p *driver.RunBlockParams) (*driver.Run, error) {
	return d.updateRun(ctx, runUpdate{op: "block", id: p.ID,
		stmt:   func(s *runStmts) *sql.Stmt { return s.block },
		args:   func(time.Time) []any { return []any{p.Reason, p.ID, p.Fence} },
		refuse: fencedRefusal("block", p.ID, p.Fence, "", false)})
}
