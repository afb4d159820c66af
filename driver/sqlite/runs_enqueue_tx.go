package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// BeginTx opens a transaction on the store's one writer connection, for
// the caller's own writes and Client.EnqueueTx: BEGIN IMMEDIATE, so it
// holds SQLite's write lock from the start and every write it makes —
// the caller's rows and the runs — commits or rolls back together.
//
// While it is open, every other write of this store (a worker's claims,
// renewals and completions included) waits for it: keep it short, and
// never call another write of the store from inside it on the same
// goroutine (that write would wait for this transaction forever). Reads
// (RunGet, the read pool) go on, and do not see its writes until it
// commits.
func (d *Driver) BeginTx(ctx context.Context) (*sql.Tx, error) {
	tx, err := d.s.w.BeginTx(ctx, nil) // _txlock=immediate: takes the writer lock
	if err != nil {
		return nil, fmt.Errorf("sqlite: begin: %w", err)
	}
	return tx, nil
}

// RunEnqueueTx implements driver.RunStore: RunEnqueue's statements, in the
// caller's *sql.Tx, which it neither commits nor rolls back. The
// statements are prepared on that transaction, not taken from the cache
// (see enqueueWriter.bind). The store time is read when the call starts;
// in a transaction from BeginTx that is under the writer lock, as
// RunEnqueue's. A *sql.Tx of another database/sql handle on the same
// file works too (SQLite's lock orders it with the store's writer); one on
// another database fails on its missing runs table (ErrNotMigrated).
func (d *store) RunEnqueueTx(ctx context.Context, p *driver.RunEnqueueTxParams) ([]driver.RunEnqueued, error) {
	tx, ok := p.Tx.(*sql.Tx)
	if !ok || tx == nil {
		return nil, driver.WrongTx("*sql.Tx", p.Tx)
	}
	es := p.Runs // valid, defaults filled, payloads compact: driver.Validating
	w := enqueueWriter{ctx: ctx, es: es, out: make([]driver.RunEnqueued, len(es)), tx: tx,
		now: journal.NormalizeTime(d.clock.Now()).UnixMicro()}
	// Ask the transaction before anything else, so that an ended one is
	// refused typed even for an empty batch.
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrTxDone) {
			return nil, driver.TxDone(err)
		}
		return nil, fmt.Errorf("sqlite: enqueueing runs in the caller's transaction: %w", err)
	}
	if err := w.write(); err != nil {
		if errors.Is(err, sql.ErrTxDone) {
			return nil, driver.TxDone(err)
		}
		return nil, err
	}
	return w.out, nil
}
