package drivertest

import (
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// enqueueTx is one RunEnqueueTx of es in a caller's transaction of its
// own, committed when the enqueue is accepted and rolled back when it is
// refused, as a caller would.
func (x *hx) enqueueTx(es ...runs.Enqueue) ([]driver.RunEnqueued, error) {
	tx, err := x.h.BeginTx(x.ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	out, err := x.runStore().RunEnqueueTx(x.ctx, &driver.RunEnqueueTxParams{Tx: tx.Tx, Runs: es})
	if err != nil {
		_ = tx.Rollback(x.ctx)
		return nil, err
	}
	return out, tx.Commit(x.ctx)
}

// enqueueTxEntries drive the corpus into the enqueue in the caller's
// transaction: the same rules as RunEnqueue, the same read back.
func enqueueTxEntries() []hostileEntry {
	return []hostileEntry{
		str("RunEnqueueTx.queue", func(x *hx, v string) hostileCall {
			var got []driver.RunEnqueued
			return hostileCall{func() (err error) {
				got, err = x.enqueueTx(runs.Enqueue{Queue: v})
				return err
			}, func() error {
				r, err := x.runNow(got[0].Run.ID)
				if err != nil {
					return err
				}
				return sameString("queue", r.Queue, v)
			}}
		}),
		str("RunEnqueueTx.unique_key", func(x *hx, v string) hostileCall {
			var got []driver.RunEnqueued
			return hostileCall{func() (err error) {
				got, err = x.enqueueTx(runs.Enqueue{Queue: "q", UniqueKey: v})
				return err
			}, func() error {
				r, err := x.runNow(got[0].Run.ID)
				if err != nil {
					return err
				}
				return sameString("unique key", r.UniqueKey, v)
			}}
		}),
		js("RunEnqueueTx.payload", func(x *hx, v []byte) hostileCall {
			var got []driver.RunEnqueued
			return hostileCall{func() (err error) {
				got, err = x.enqueueTx(runs.Enqueue{Queue: "q", Payload: v})
				return err
			}, func() error {
				r, err := x.runNow(got[0].Run.ID)
				if err != nil {
					return err
				}
				return sameBytes("payload", r.Payload, compactOf(v, []byte("null")))
			}}
		}),
	}
}
