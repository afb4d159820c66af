package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// rfc3339NanoSQL formats expires_at (Unix microseconds, UTC) exactly as Go's
// time.RFC3339Nano does: seconds, then the fraction with its trailing
// zeros trimmed and no dot when it is zero, then Z. (Valid for years
// 1970..9999, which covers every expiry the store clock can write.)
const rfc3339NanoSQL = `strftime('%Y-%m-%dT%H:%M:%S', expires_at / 1000000, 'unixepoch')
        || CASE WHEN expires_at % 1000000 = 0 THEN '' ELSE rtrim(printf('.%06d', expires_at % 1000000), '0') END
        || 'Z'`

// runReclaimSQL reclaims one batch in one statement. The subquery picks the
// expired leases, oldest expiry first (the runs_expiry index); the UPDATE
// returns them to available (or failed when their attempts are spent) with
// fence+1, so the expired holder's later writes match no row. SET
// expressions read the row as it was, so the reason names the expired
// lease's expiry, owner and fence. scheduled_at is left as it was: the
// run goes back to its own place in the claim order, not behind the queue
// (docs/design/run-order.md); reclaimed_at records when. The limit is
// +?2, not ?2, so that binding it does not make SQLite compile the
// statement again (runClaimSQL).
const runReclaimSQL = `UPDATE runs SET
    state        = CASE WHEN attempt >= max_attempts THEN 'failed' ELSE 'available' END,
    finished_at  = CASE WHEN attempt >= max_attempts THEN ?1 END,
    reclaimed_at = ?1,
    fence = fence + 1, owner = '', expires_at = NULL,
    reason = 'lease expired at ' || ` + rfc3339NanoSQL + ` || ' (owner ' || owner || ', fence ' || fence || ')'
WHERE id IN (
    SELECT id FROM runs
    WHERE state = 'running' AND expires_at <= ?1
    ORDER BY expires_at, id
    LIMIT +?2)
RETURNING ` + runColumns

// RunReclaim implements driver.RunStore. Under BEGIN IMMEDIATE the pick and
// the take cannot be separated by another writer, so reclaimers on several
// processes sharing the file never reclaim one lease twice: the second
// finds it no longer running.
func (d *store) RunReclaim(ctx context.Context, p *driver.RunReclaimParams) (*driver.RunReclaimResult, error) {
	limit := p.Limit // > 0: defaulted by driver.Validating
	st, err := d.runPrepared(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite: reclaiming runs: begin: %w", err)
	}
	defer tx.Rollback()
	now := journal.NormalizeTime(d.clock.Now()) // read under the writer lock
	rows, err := tx.StmtContext(ctx, st.reclaim).QueryContext(ctx, now.UnixMicro(), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: reclaiming runs: %w", err)
	}
	out, err := scanRuns(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlite: reclaiming runs: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlite: reclaiming runs: commit: %w", err)
	}
	// RETURNING's order is unspecified; id order is at least stable.
	slices.SortFunc(out, func(a, b *driver.Run) int { return cmp.Compare(a.ID, b.ID) })
	return &driver.RunReclaimResult{Reclaimed: out}, nil
}
