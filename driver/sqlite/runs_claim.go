package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// runClaimSQL claims in one statement: the subquery picks the due runs in
// claim order (the runs_claimable index), the UPDATE takes them. Under the
// single writer nothing can claim between the pick and the take, so no run
// is claimed twice; fence+1 fences out whoever held any earlier claim.
//
// The limit is written +?5, not ?5: SQLite (3.54) plans a LIMIT that is a
// bare parameter with the value bound at the time, and marks the
// statement to be compiled again whenever that parameter is bound anew —
// every claim, parsing and planning this UPDATE each time
// (TestRunStatementsAreNotReprepared; docs/BENCHMARKS.md, stop 27). The
// unary plus is the same integer to the VM and not a bare parameter to the
// planner.
const runClaimSQL = `UPDATE runs SET
    state = 'running', owner = ?1, fence = fence + 1, attempt = attempt + 1, expires_at = ?2
WHERE id IN (
    SELECT id FROM runs
    WHERE queue = ?3 AND state = 'available' AND scheduled_at <= ?4
    ORDER BY priority, scheduled_at, id
    LIMIT +?5)
RETURNING ` + claimedColumns

// RunClaim implements driver.RunStore, in a writer transaction shared
// with the enqueues and completions queued beside it (group.go).
func (d *store) RunClaim(ctx context.Context, p *driver.RunClaimParams) ([]*driver.Run, error) {
	st, err := d.runPrepared(ctx)
	if err != nil {
		return nil, err
	}
	qs, err := d.queuePrepared(ctx)
	if err != nil {
		return nil, err
	}
	var out []*driver.Run
	err = d.inGroupTx(ctx, "claiming runs", func(ctx context.Context, tx *sql.Tx) error {
		// The expiry is computed on the store clock, read under the writer
		// lock, so it is ordered with every other lease write.
		now := journal.NormalizeTime(d.clock.Now())
		// A queue with a registry row that pauses or limits it is claimed
		// under those (queues_claim.go); any other by the plain statement,
		// one primary-key read dearer than before the registry existed.
		ctl, err := readQueueControl(ctx, tx.StmtContext(ctx, qs.control), p.Queue)
		if err != nil {
			return fmt.Errorf("sqlite: claiming runs: reading the queue: %w", err)
		}
		if ctl.controlled() {
			out, err = d.claimLimited(ctx, tx, qs, ctl, p, now)
		} else {
			out, err = d.claimPlain(ctx, tx, st, p, now)
		}
		if err != nil {
			return fmt.Errorf("sqlite: claiming runs: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// RETURNING's order is unspecified: give the runs back in claim order.
	slices.SortFunc(out, func(a, b *driver.Run) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), a.ScheduledAt.Compare(b.ScheduledAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// claimPlain claims from a queue nothing pauses or limits (runClaimSQL).
func (d *store) claimPlain(ctx context.Context, tx *sql.Tx, st *runStmts, p *driver.RunClaimParams, now time.Time) ([]*driver.Run, error) {
	expires := now.Add(p.Lease).UnixMicro()
	rows, err := tx.StmtContext(ctx, st.claim).QueryContext(ctx, p.Owner, expires, p.Queue, now.UnixMicro(), p.Limit)
	if err != nil {
		return nil, err
	}
	return scanClaimedRuns(rows, p.Queue, p.Owner, expires)
}
