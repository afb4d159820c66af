package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// renewRuns is the write-behind drain: one statement renews every lease of
// the batch (column arrays $2, $3, $6, unnested in step) held by its owner
// — $6's entry, or $4 for all when $6 is empty (unnest pads it with NULL)
// — setting expires_at = store now + $5.
//
// l locks the candidate rows in id order, for the reason completeRuns does
// (every multi-row locker that waits takes its locks in id order, so two
// of them can never deadlock). k keeps the locked rows whose lease has not
// expired, compared with clock_timestamp() read on l's output — after
// each row's lock is held, not t.now, whose one read Postgres may make
// before l waits (t is read when a plan first needs it): a lease that
// expired while the drain waited must not be revived. (The comparison once sat in the UPDATE's WHERE; the planner
// may scan runs for it ahead of l, and a lock holder that modifies
// nothing — an effect's FOR SHARE — gets no re-evaluation after the wait:
// TestRenewExpiredWhileWaitingForTheLock.) k reads only l's rows and,
// holding a volatile function, is never folded into the UPDATE. The
// UPDATE's WHERE states the rest of the rule again on the rows it writes.
// The new expiry counts from t.now, read at or before the commit, and the
// holder counts its runway from the drain's send, earlier still, so the
// holder never assumes more runway than the row gives it.
//
// l states the batch's ids on runs (r.id = ANY($2)) besides the join:
// joined to the unnested batch alone, a drain of 1,000 leases was planned
// as a Hash Join over a Seq Scan of runs, every drain reading the whole
// table (TestWideRunBatchesFindTheirRowsByKey).
//
// It writes only expires_at: never a fence, owner or state.
const renewRuns = `WITH ` + storeNowSQL + `,
l AS (
    SELECT r.id, c.fence, coalesce(c.owner, $4) AS owner, r.expires_at
    FROM unnest($2::bigint[], $3::bigint[], $6::text[]) AS c(id, fence, owner)
    JOIN runs r ON r.id = c.id AND r.fence = c.fence
    WHERE r.id = ANY($2::bigint[]) AND r.state = 'running' AND r.owner = coalesce(c.owner, $4)
    ORDER BY r.id
    FOR UPDATE OF r
),
k AS (SELECT id, fence, owner FROM l WHERE expires_at > coalesce($1::timestamptz, clock_timestamp()))
UPDATE runs r SET expires_at = t.now + $5::interval
FROM k, t
WHERE r.id = k.id AND r.fence = k.fence AND r.owner = k.owner AND r.state = 'running'
RETURNING r.id, t.now`

// RunRenewMany implements driver.RunStore: one statement in autocommit on
// the critical pool — one round trip, one commit — for the whole drain.
func (d *store) RunRenewMany(ctx context.Context, p *driver.RunRenewManyParams) (*driver.RunRenewManyResult, error) {
	n := len(p.Runs)
	if n == 0 {
		return &driver.RunRenewManyResult{}, nil
	}
	ids, fences := make(int8Array, n), make(int8Array, n) // arrays.go: no allocation per element
	for i, r := range p.Runs {
		ids[i], fences[i] = r.ID, r.Fence
	}
	fail := func(err error) error {
		return fmt.Errorf("postgres: renewing %d leases: %w", n, withCtx(ctx, err))
	}
	// Lease writes take the reserved pool whatever their class: a drain
	// queued behind bulk work would age every lease it carries.
	conn, err := d.acquire(ctx, true)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	owners := p.Owners
	if owners == nil {
		owners = []string{}
	}
	rows, err := conn.Query(ctx, renewRuns, d.fakeNow(), ids, fences, p.Owner, p.Lease, owners)
	if err != nil {
		return nil, fail(err)
	}
	renewed := make(map[int64]struct{}, n)
	var id int64
	var now time.Time
	for rows.Next() {
		if err := rows.Scan(&id, &now); err != nil {
			rows.Close()
			return nil, fail(err)
		}
		renewed[id] = struct{}{}
	}
	if err := rows.Err(); err != nil {
		return nil, fail(mapWriteError(err))
	}
	res := driver.SplitRenewed(p.Runs, renewed)
	if len(renewed) > 0 {
		res.StoreNow = now.UTC()
	}
	return res, nil
}
