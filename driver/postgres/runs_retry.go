package postgres

import (
	"context"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// retryRun is the operator's retry (River's JobRetry): a failed or
// cancelled run is due at once with one attempt more than it used when
// its budget is spent. The fence is kept: the run holds no lease, and the
// next claim moves it on. $3 = 0 retries at any fence; otherwise only at
// that one, so two operators acting on what they both saw retry it once.
const retryRun = `WITH ` + storeNowSQL + `
UPDATE runs SET state = 'available', scheduled_at = t.now, finished_at = NULL,
    max_attempts = GREATEST(max_attempts, attempt + 1)
FROM t
WHERE id = $2 AND state IN ('failed', 'cancelled') AND ($3::bigint = 0 OR fence = $3::bigint)
RETURNING ` + runColumns

// RunRetry implements driver.RunStore. A retried run whose unique key was
// taken since breaks the unique index: mapWriteError makes it ErrConflict.
func (d *store) RunRetry(ctx context.Context, p *driver.RunRetryParams) (*driver.Run, error) {
	return d.runWrite(ctx, "retry", p.ID, critical(p), retryRun, []any{d.fakeNow(), p.ID, p.Fence},
		func(cur *driver.Run, _ time.Time) error { return driver.ClassifyRetryRefusal(p, cur) })
}
