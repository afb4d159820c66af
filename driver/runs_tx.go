package driver

import (
	"fmt"
	"reflect"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// RunEnqueueTxParams enqueues runs inside the caller's transaction.
type RunEnqueueTxParams struct {
	// Tx is the caller's open transaction on the store: a pgx.Tx on
	// Postgres (its search_path must reach the driver's schema), a *sql.Tx
	// on SQLite (sqlite.Driver.BeginTx opens one on the store's writer).
	Tx   any
	Runs []runs.Enqueue
}

// Class implements lease.Classed: the write is durable when the caller's
// transaction commits, which is the caller's call.
func (*RunEnqueueTxParams) Class() lease.Durability { return lease.SyncCritical }

// Validate checks the transaction is there and every run of the batch.
func (p *RunEnqueueTxParams) Validate() error { _, err := p.normalized(); return err }

// normalized returns a copy with each run's defaults filled and its payload
// compact, as RunEnqueueParams does; the caller's slice is not changed.
func (p *RunEnqueueTxParams) normalized() (*RunEnqueueTxParams, error) {
	if isNil(p.Tx) {
		return nil, &journal.InputError{Field: "tx", Problem: "an enqueue in the caller's transaction needs that transaction"}
	}
	n, err := (&RunEnqueueParams{Runs: p.Runs}).normalized()
	if err != nil {
		return nil, err
	}
	return &RunEnqueueTxParams{Tx: p.Tx, Runs: n.Runs}, nil
}

// isNil is true for nil and for a nil pointer in an interface (a
// (*sql.Tx)(nil) passed as any), which a driver would otherwise call
// through and panic on.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// WrongTx is a driver's refusal of a caller's transaction of another kind
// than its own: a *journal.InputError (ErrInvalid) naming both.
func WrongTx(want string, got any) error {
	return &journal.InputError{Field: "tx", Problem: fmt.Sprintf("this store takes a %s, got a %T", want, got)}
}

// TxDone is a driver's refusal of a caller's transaction that has already
// committed or rolled back: nothing was written.
func TxDone(cause error) error {
	return &journal.InputError{Field: "tx", Problem: fmt.Sprintf("the transaction has already ended (%v)", cause)}
}
