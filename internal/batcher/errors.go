package batcher

import (
	"fmt"

	"github.com/leasehold/leasehold/lease"
)

// ErrStopped is the outcome of an item the batcher could not flush before
// it stopped, and the answer to an Add after Stop. Every such error wraps
// it; see StoppedError. It wraps lease.ErrClosed, the sentinel users match.
var ErrStopped = fmt.Errorf("batcher: stopped before the item was flushed: %w", lease.ErrClosed)

// StoppedError is the final outcome of an item still pending when Stop's
// deadline passed: its store write was never confirmed (it may or may not
// have been applied, if the last attempt failed on the wire). Last is the
// last store error, if any.
type StoppedError struct {
	Name string
	Last error
}

func (e *StoppedError) Error() string {
	if e.Last == nil {
		return fmt.Sprintf("%s stopped before the item was flushed", e.Name)
	}
	return fmt.Sprintf("%s stopped before the item was flushed (last attempt: %v)", e.Name, e.Last)
}

// Unwrap lets errors.Is find ErrStopped and the last store error.
func (e *StoppedError) Unwrap() []error {
	if e.Last == nil {
		return []error{ErrStopped}
	}
	return []error{ErrStopped, e.Last}
}
