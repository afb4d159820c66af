package postgres

import (
	"context"
	"fmt"
	"sort"

	"github.com/leasehold/leasehold/driver"
)

// RunClaim implements driver.RunStore: one round trip for a queue without
// controls that has runs to claim, and for a limited queue once a claim
// found it limited; two for an idle or paused one (queues_claim.go).
// The runs come back in claim order.
func (d *store) RunClaim(ctx context.Context, p *driver.RunClaimParams) ([]*driver.Run, error) {
	fail := func(err error) error {
		return fmt.Errorf("postgres: claiming runs of %q: %w", p.Queue, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	out, err := d.claim(ctx, conn, p)
	if err != nil {
		return nil, fail(err)
	}
	// RETURNING has no order of its own.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		if !a.ScheduledAt.Equal(b.ScheduledAt) {
			return a.ScheduledAt.Before(b.ScheduledAt)
		}
		return a.ID < b.ID
	})
	return out, nil
}

// rfc3339NanoSQL is the old expiry as Go's time.RFC3339Nano prints it in
// UTC (the fraction's trailing zeros trimmed, none for a whole second), so
// the reason reads the same as the SQLite driver's.
const rfc3339NanoSQL = `to_char(c.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
        || rtrim(rtrim(to_char(c.expires_at AT TIME ZONE 'UTC', '"."US'), '0'), '.') || 'Z'`

// reclaimRuns returns expired leases to available (failed when attempts
// are exhausted) in one statement. c reads the picked rows' old expiry,
// owner and fence for the reason; SKIP LOCKED lets every replica run it at
// once, each taking rows the others have not locked. A pick whose lease
// was renewed (or whose run was completed) after the statement's snapshot
// is re-checked on its new version under the lock and dropped, and the
// new fence (greatest(fence, floor)+1, fencefloor.go) fences out the old
// holder's later writes. scheduled_at is left
// as it was: the run goes back to its own place in the claim order, not
// behind the queue (docs/design/run-order.md); reclaimed_at records when.
// The UPDATE states c's ids on runs as an array besides the join (which
// the reason needs): joined to c alone, a reclaim of 1,000 was planned as
// a Hash Join over a Seq Scan of runs (TestWideRunBatchesFindTheirRowsByKey).
const reclaimRuns = `WITH ` + storeNowSQL + `, ` + fenceFloorSQL + `, c AS (
    SELECT id, expires_at, owner, fence FROM runs
    WHERE state = 'running' AND expires_at <= (SELECT now FROM t)
    ORDER BY expires_at, id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
UPDATE runs r SET
    state = CASE WHEN r.attempt >= r.max_attempts THEN 'failed' ELSE 'available' END,
    fence = greatest(r.fence, fl.floor) + 1, owner = '', expires_at = NULL, reclaimed_at = t.now,
    finished_at = CASE WHEN r.attempt >= r.max_attempts THEN t.now END,
    reason = format('lease expired at %s (owner %s, fence %s)', ` + rfc3339NanoSQL + `, c.owner, c.fence)
FROM c, t, fl
WHERE r.id = c.id AND r.id = ANY (ARRAY(SELECT id FROM c))
RETURNING ` + runColumnsR

// RunReclaim implements driver.RunStore in one statement, one round trip.
// The runs come back in id order.
func (d *store) RunReclaim(ctx context.Context, p *driver.RunReclaimParams) (*driver.RunReclaimResult, error) {
	limit := p.Limit // > 0: defaulted by driver.Validating
	fail := func(err error) error {
		return fmt.Errorf("postgres: reclaiming runs: %w", withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, plantedFloorBug(reclaimRuns), d.fakeNow(), limit)
	if err != nil {
		return nil, fail(err)
	}
	out, err := scanRuns(rows)
	if err != nil {
		return nil, fail(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return &driver.RunReclaimResult{Reclaimed: out}, nil
}
