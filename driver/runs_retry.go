package driver

import (
	"fmt"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// RunRetryParams sends a finished-without-success run round again: the
// operator's retry, as River's JobRetry. Fence, when not 0, is the fence
// the caller saw: the retry applies only while the run still stands at
// it, so two operators pressing retry on the same page retry it once.
type RunRetryParams struct {
	ID    int64
	Fence int64 // 0: whatever the fence
}

// Class implements lease.Classed.
func (*RunRetryParams) Class() lease.Durability { return lease.SyncCritical }

// Validate checks the run id and the fence (0, or a fence a run can have).
func (p *RunRetryParams) Validate() error {
	if err := validateRunID(p.ID); err != nil {
		return err
	}
	if p.Fence < 0 {
		return &journal.InputError{Field: "fence", Problem: fmt.Sprintf("fence %d is negative (0 means any)", p.Fence)}
	}
	return nil
}

// ClassifyRetryRefusal explains a retry that matched no row, from the run
// as the refused statement's transaction read it (nil: no such run):
// ErrNotFound, ErrFenced when the run moved past the fence the caller
// saw, else ErrConflict (the run is not failed or cancelled).
func ClassifyRetryRefusal(p *RunRetryParams, cur *Run) error {
	switch {
	case cur == nil:
		return fmt.Errorf("run %d: %w", p.ID, ErrNotFound)
	case p.Fence != 0 && cur.Fence != p.Fence:
		return fmt.Errorf("retry of run %d refused: it is at fence %d, not %d: %w", p.ID, cur.Fence, p.Fence, ErrFenced)
	default:
		return fmt.Errorf("retry of run %d refused: run is %s, not failed or cancelled: %w", p.ID, cur.State, ErrConflict)
	}
}
