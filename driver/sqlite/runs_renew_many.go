package sqlite

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// renewChunk is how many leases one runRenewChunkSQL carries, for the
// reason completeChunk is a chunk.
const renewChunk = 100

// runRenewChunkSQL renews up to renewChunk leases in one statement:
// RunRenew's rule joined against the chunk's (id, fence, owner) rows. Lease
// i (from 0) binds parameters 3i+1, 3i+2, 3i+3 as id, fence and owner; the
// three after the chunk's are the new expiry, the batch's owner (for rows
// whose own is NULL) and the store now. Padding rows are NULL and match
// nothing. It writes only expires_at. The parameters are anonymous: see
// valuesCTE.
var runRenewChunkSQL = valuesCTE("c(id, fence, owner)", renewChunk, 3) + `
UPDATE runs SET expires_at = ?
FROM c
WHERE runs.id = c.id AND runs.fence = c.fence AND runs.owner = coalesce(c.owner, ?) AND runs.state = 'running' AND runs.expires_at > ?
RETURNING runs.id`

// RunRenewMany implements driver.RunStore: the whole drain is one BEGIN
// IMMEDIATE transaction — one commit — of one runRenewChunkSQL per
// renewChunk leases, all against one store instant read under the writer
// lock, so no reclaim can come between the check and the write.
func (d *store) RunRenewMany(ctx context.Context, p *driver.RunRenewManyParams) (*driver.RunRenewManyResult, error) {
	n := len(p.Runs)
	if n == 0 {
		return &driver.RunRenewManyResult{}, nil
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("sqlite: renewing %d leases: "+format, append([]any{n}, args...)...)
	}
	st, err := d.runPrepared(ctx) // before BeginTx: see runPrepared
	if err != nil {
		return nil, err
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fail("begin: %w", err)
	}
	defer tx.Rollback()
	renew := tx.StmtContext(ctx, st.renewChunk)
	now := journal.NormalizeTime(d.clock.Now())
	// The chunk's parameters come first (valuesCTE), then the new expiry,
	// the owner and the instant the lease must not have passed.
	args := make([]any, 3*renewChunk+3)
	tail := args[3*renewChunk:]
	tail[0], tail[1], tail[2] = now.Add(p.Lease).UnixMicro(), p.Owner, now.UnixMicro()
	renewed := make(map[int64]struct{}, n)
	for from := 0; from < n; from += renewChunk {
		for i := range renewChunk {
			a := args[3*i : 3*i+3]
			a[0], a[1], a[2] = nil, nil, nil
			if k := from + i; k < n {
				a[0], a[1] = p.Runs[k].ID, p.Runs[k].Fence
				if p.Owners != nil {
					a[2] = p.Owners[k]
				}
			}
		}
		if err := scanIDs(ctx, renew, args, renewed); err != nil {
			return nil, fail("leases %d to %d: %w", from, min(from+renewChunk, n)-1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fail("commit: %w", err)
	}
	res := driver.SplitRenewed(p.Runs, renewed)
	if len(renewed) > 0 {
		res.StoreNow = now.UTC()
	}
	return res, nil
}
