package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
)

// BeginTx opens a transaction on the general pool, with the driver's
// search_path, for callers without a pool of their own: their writes and
// Client.EnqueueTx in it commit or roll back together. A caller with its
// own pgx pool passes a pgx.Tx of that pool instead; its search_path must
// reach the driver's schema (Config.Schema).
func (d *Driver) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	tx, err := d.s.general.BeginTx(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("postgres: begin: %w", withCtx(ctx, err))
	}
	return tx, nil
}

// RunEnqueueTx implements driver.RunStore: RunEnqueue's statements — the
// unique keys' advisory locks, the inserts in input order, the lookup of
// taken keys — pipelined in one round trip on the caller's pgx.Tx, which
// it neither commits nor rolls back. The advisory locks are
// transaction-scoped, so they are held until the caller's commit: a
// concurrent enqueue of the same key waits for it and then returns this
// run (or, after a rollback, inserts its own), never a second run.
//
// Every time the inserts write is the statement's clock_timestamp(), not
// the transaction's start. Under REPEATABLE READ or SERIALIZABLE, a key
// taken by a transaction that committed after the caller's snapshot makes
// Postgres abort the caller's transaction with a serialization failure
// (SQLSTATE 40001), the caller's to retry; READ COMMITTED, the default,
// returns that run as Existing.
func (d *store) RunEnqueueTx(ctx context.Context, p *driver.RunEnqueueTxParams) (out []driver.RunEnqueued, err error) {
	tx, ok := p.Tx.(pgx.Tx)
	if !ok || tx == nil {
		return nil, driver.WrongTx("pgx.Tx", p.Tx)
	}
	es := p.Runs // valid, defaults filled, payloads compact: driver.Validating
	fail := func(err error) error {
		if errors.Is(err, pgx.ErrTxClosed) {
			return driver.TxDone(err)
		}
		return fmt.Errorf("postgres: enqueueing %d runs in the caller's transaction: %w", len(es), withCtx(ctx, err))
	}
	if len(es) == 0 {
		// Nothing to write, but an ended transaction is refused the same.
		if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
			return nil, fail(err)
		}
		return []driver.RunEnqueued{}, nil
	}
	pl := planEnqueue(es)
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(pl.steps)+2)}
	pl.queue(b, d.fakeNow())
	br := tx.SendBatch(ctx, b)
	out, err = pl.read(br)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fail(err)
	}
	return out, nil
}
