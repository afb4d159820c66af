package leasehold

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

// EnqueueTx enqueues one run or a batch inside the caller's own
// transaction tx, so the runs exist if and only if tx commits: workers see
// them only after the commit, never after a rollback, and a business row
// written in tx and the runs it needs are never found one without the
// other. tx is a pgx.Tx on Postgres (from your own pgx pool, its
// search_path reaching the store's schema, or from postgres.Driver.BeginTx)
// and a *sql.Tx on SQLite (from sqlite.Driver.BeginTx, which opens it on
// the store's one writer). EnqueueTx never commits nor rolls tx back.
//
// The batch is validated first, as Enqueue's, with Config.Queues: one bad
// run refuses it all, typed (ErrInvalid, ErrUnknownQueue), with nothing
// written in tx, which stays usable. A tx of the other store's kind, or one
// that already ended, is refused with ErrInvalid. A failure of the store
// itself (a lost connection, a statement timeout) may leave tx aborted, as
// any failed statement does on Postgres: roll it back. A unique key behaves as
// in Enqueue; on Postgres it stays locked until tx ends, so a concurrent
// enqueue of the key waits for your commit (and then returns your run) or
// your rollback (and then inserts its own).
//
// Inside a handler, the tx that RunHandle.Tx hands its fn is such a
// transaction: an EnqueueTx there enqueues a follow-up run exactly once,
// committed with the run's effect (a retried attempt finds the effect
// committed and does not call fn again).
//
// On SQLite, tx holds the store's write lock: every other write of the
// store, a worker's included, waits until it ends. Keep it short, and do
// not call the client's other writes (Enqueue, Cancel…) while it is open.
func (c *Client) EnqueueTx(ctx context.Context, tx any, rs ...Enqueue) ([]Enqueued, error) {
	for i := range rs {
		if err := c.checkQueue(rs[i].Queue); err != nil {
			return nil, fmt.Errorf("run %d of the batch: %w", i, err)
		}
	}
	return c.d.RunEnqueueTx(ctx, &driver.RunEnqueueTxParams{Tx: tx, Runs: rs})
}
