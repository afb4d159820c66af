package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// runReleaseSQL is the holder's release at a graceful stop: available at
// once, the attempt given back, scheduled_at kept (the run's place in the
// queue), the fence unchanged (leaving 'running' already fences the old
// holder out; the next claim increments it).
const runReleaseSQL = `UPDATE runs SET state = 'available', attempt = attempt - 1, owner = '', expires_at = NULL, reason = ?1
WHERE id = ?2 AND fence = ?3 AND state = 'running'
RETURNING ` + runColumns

// RunRelease implements driver.RunReleaser.
func (d *store) RunRelease(ctx context.Context, p *driver.RunReleaseParams) (*driver.Run, error) {
	return d.updateRun(ctx, runUpdate{op: "release", id: p.ID,
		stmt:   func(s *runStmts) *sql.Stmt { return s.release },
		args:   func(time.Time) []any { return []any{p.Reason, p.ID, p.Fence} },
		refuse: fencedRefusal("release", p.ID, p.Fence, "", false)})
}
