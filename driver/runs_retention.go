package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// RunRetainer deletes finished runs past their retention (the cleaner,
// issue 16). It touches runs, run_effects and run_events only: never a
// world's journal.
type RunRetainer interface {
	// RunDeleteFinished deletes up to p.Limit runs in state p.State
	// (completed, failed or cancelled) whose finished_at is older than
	// store now - p.OlderThan, oldest first, together with their effects
	// and events, in one short transaction. A run with an effect intent
	// that was never committed (an *uncertain* effect, unresolved) is
	// never deleted, whatever its age. Safe on every replica at once
	// (Postgres: FOR UPDATE SKIP LOCKED on the picked runs; SQLite: the
	// single writer). Callers repeat while Runs comes back equal to
	// Limit.
	RunDeleteFinished(ctx context.Context, p *RunDeleteFinishedParams) (*RunDeleteFinishedResult, error)
}

// MaxRunDeleteBatch bounds one RunDeleteFinished batch, so one delete's
// transaction stays short whatever the caller asks.
const MaxRunDeleteBatch = 10000

// RunDeleteFinishedParams is one cleaner batch of one final state.
type RunDeleteFinishedParams struct {
	State     runs.State    // completed, failed or cancelled
	OlderThan time.Duration // > 0: finished before store now - OlderThan
	Limit     int           // 1..MaxRunDeleteBatch
}

// Class implements lease.Classed: bulk housekeeping, never ahead of lease
// writes (the general pool on Postgres).
func (*RunDeleteFinishedParams) Class() lease.Durability { return lease.DurableBatched }

// Validate checks the state, the age and the bound.
func (p *RunDeleteFinishedParams) Validate() error {
	switch p.State {
	case runs.StateCompleted, runs.StateFailed, runs.StateCancelled:
	default:
		return &journal.InputError{Field: "state", Problem: fmt.Sprintf("%q is not a final state (completed, failed, cancelled)", p.State)}
	}
	if p.OlderThan <= 0 || p.OlderThan > runs.MaxRetention {
		return &journal.InputError{Field: "older_than", Problem: fmt.Sprintf("%s is outside (0, %s]", p.OlderThan, runs.MaxRetention)}
	}
	if p.Limit < 1 || p.Limit > MaxRunDeleteBatch {
		return &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d is outside 1..%d", p.Limit, MaxRunDeleteBatch)}
	}
	return nil
}

// RunDeleteFinishedResult counts what one batch deleted.
type RunDeleteFinishedResult struct {
	Runs, Effects, Events int64
}
