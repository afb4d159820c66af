package postgres

import (
	"context"

	"github.com/leasehold/leasehold/driver"
)

// releaseRun is the holder's release at a graceful stop: available at
// once, the attempt given back, scheduled_at kept (the run's place in the
// queue), the fence unchanged (leaving 'running' already fences the old
// holder out; the next claim increments it).
const releaseRun = `WITH ` + storeNowSQL + `
UPDATE runs SET state = 'available', attempt = attempt - 1, owner = '', expires_at = NULL, reason = $4
FROM t
WHERE id = $2 AND fence = $3 AND state = 'running'
RETURNING ` + runColumns

// RunRelease implements driver.RunReleaser.
func (d *store) RunRelease(ctx context.Context, p *driver.RunReleaseParams) (*driver.Run, error) {
	return d.runWrite(ctx, "release", p.ID, critical(p), releaseRun,
		[]any{d.fakeNow(), p.ID, p.Fence, p.Reason}, fencedRefusal("release", p.ID, p.Fence, "", false))
}
