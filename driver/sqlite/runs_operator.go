package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// The operator's writes carry no fence: their WHERE states the states they
// leave instead.

// runUnblockSQL makes a blocked run due at once. A blocked run holds no
// lease, so nothing needs fencing out.
const runUnblockSQL = `UPDATE runs SET state = 'available', scheduled_at = ?1
WHERE id = ?2 AND state = 'blocked'
RETURNING ` + runColumns

// runCancelSQL: fence+1 so that a running holder's later writes (which
// name the old fence) match no row.
const runCancelSQL = `UPDATE runs SET
    state = 'cancelled', fence = fence + 1, owner = '', expires_at = NULL, finished_at = ?1, reason = ?2
WHERE id = ?3 AND state IN ('available', 'running', 'blocked')
RETURNING ` + runColumns

// RunUnblock implements driver.RunStore.
func (d *store) RunUnblock(ctx context.Context, p *driver.RunUnblockParams) (*driver.Run, error) {
	return d.updateRun(ctx, runUpdate{op: "unblock", id: p.ID,
		stmt: func(s *runStmts) *sql.Stmt { return s.unblock },
		args: func(now time.Time) []any { return []any{now.UnixMicro(), p.ID} },
		refuse: func(cur *driver.Run, _ time.Time) error {
			if cur == nil {
				return fmt.Errorf("run %d: %w", p.ID, driver.ErrNotFound)
			}
			return fmt.Errorf("unblock of run %d refused: run is %s, not blocked: %w", p.ID, cur.State, driver.ErrConflict)
		}})
}

// RunCancel implements driver.RunStore.
func (d *store) RunCancel(ctx context.Context, p *driver.RunCancelParams) (*driver.Run, error) {
	return d.updateRun(ctx, runUpdate{op: "cancel", id: p.ID,
		stmt: func(s *runStmts) *sql.Stmt { return s.cancel },
		args: func(now time.Time) []any { return []any{now.UnixMicro(), p.Reason, p.ID} },
		refuse: func(cur *driver.Run, _ time.Time) error {
			if cur == nil {
				return fmt.Errorf("run %d: %w", p.ID, driver.ErrNotFound)
			}
			return fmt.Errorf("cancel of run %d refused: run is already %s: %w", p.ID, cur.State, driver.ErrConflict)
		}})
}
