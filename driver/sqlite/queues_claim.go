package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// queueControl is a queue's registry row as RunClaim reads it.
type queueControl struct {
	paused     bool
	maxRunning sql.NullInt64
	rateLimit  sql.NullInt64
	ratePeriod sql.NullInt64 // microseconds
}

// controlled says whether a claim must go through runClaimLimitedSQL.
func (c *queueControl) controlled() bool {
	return c != nil && (c.paused || c.maxRunning.Valid || c.rateLimit.Valid)
}

// readQueueControl reads q's registry row inside the claim's write
// transaction; nil if the queue has none (no pause, no limit).
func readQueueControl(ctx context.Context, stmt *sql.Stmt, q string) (*queueControl, error) {
	var c queueControl
	err := stmt.QueryRowContext(ctx, q).Scan(&c.paused, &c.maxRunning, &c.rateLimit, &c.ratePeriod)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// claimLimited claims under a queue's pause and limits (runClaimLimitedSQL)
// and, for a rate-limited queue, records each claim as a start and drops
// the starts that left the window — all in the caller's write transaction.
func (d *store) claimLimited(ctx context.Context, tx *sql.Tx, qs *queueStmts, c *queueControl, p *driver.RunClaimParams, now time.Time) ([]*driver.Run, error) {
	expires := now.Add(p.Lease).UnixMicro()
	rows, err := tx.StmtContext(ctx, qs.claimLimited).QueryContext(ctx, p.Owner, expires, p.Queue, now.UnixMicro(), p.Limit)
	if err != nil {
		return nil, err
	}
	out, err := scanClaimedRuns(rows, p.Queue, p.Owner, expires)
	if err != nil || !c.rateLimit.Valid {
		return out, err
	}
	ins := tx.StmtContext(ctx, qs.insertStart)
	for _, r := range out {
		if _, err := ins.ExecContext(ctx, p.Queue, now.UnixMicro(), r.ID); err != nil {
			return nil, err
		}
	}
	if _, err := tx.StmtContext(ctx, qs.pruneStarts).ExecContext(ctx, p.Queue, now.UnixMicro()-c.ratePeriod.Int64); err != nil {
		return nil, err
	}
	return out, nil
}
