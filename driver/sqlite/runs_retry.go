package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// runRetrySQL is the operator's retry (River's JobRetry): a failed or
// cancelled run is due at once with one attempt more than it used when
// its budget is spent. The fence is kept: the run holds no lease, and the
// next claim moves it on. ?3 = 0 retries at any fence; otherwise only at
// that one, so two operators acting on what they both saw retry it once.
const runRetrySQL = `UPDATE runs SET state = 'available', scheduled_at = ?1, finished_at = NULL,
    max_attempts = max(max_attempts, attempt + 1)
WHERE id = ?2 AND state IN ('failed', 'cancelled') AND (?3 = 0 OR fence = ?3)
RETURNING ` + runColumns

// RunRetry implements driver.RunStore. A retried run whose unique key was
// taken since (the key is released in final states a scope names) breaks
// the unique index: that is ErrConflict too.
func (d *store) RunRetry(ctx context.Context, p *driver.RunRetryParams) (*driver.Run, error) {
	r, err := d.updateRun(ctx, runUpdate{op: "retry", id: p.ID,
		stmt: func(s *runStmts) *sql.Stmt { return s.retry },
		args: func(now time.Time) []any { return []any{now.UnixMicro(), p.ID, p.Fence} },
		refuse: func(cur *driver.Run, _ time.Time) error {
			return driver.ClassifyRetryRefusal(p, cur)
		}})
	if err != nil && d.eng.IsUnique(err) && !errors.Is(err, driver.ErrConflict) {
		return nil, fmt.Errorf("%w: its unique key is held by another run: %w", err, driver.ErrConflict)
	}
	return r, err
}
