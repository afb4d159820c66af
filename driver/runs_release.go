package driver

import (
	"context"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// RunReleaser is the holder's own release of a run it will not finish
// (a worker's graceful stop past its grace period, issue 16).
type RunReleaser interface {
	// RunRelease gives a held run back at once, WHERE id AND fence AND
	// state = 'running': available, its attempt given back (attempt - 1:
	// the stop interrupted it, the handler did not fail), owner and expiry
	// cleared, the reason recorded, scheduled_at kept — so another worker
	// claims it at its own place in the queue on its next poll instead of
	// waiting for the lease to expire and the reclaimer. A fenced-out
	// release is refused as RunComplete's (ErrFenced) and changes nothing.
	RunRelease(ctx context.Context, p *RunReleaseParams) (*Run, error)
}

// RunReleaseParams releases a held run.
type RunReleaseParams struct {
	ID, Fence int64
	Reason    string
}

// Class implements lease.Classed: a fenced write, like a completion.
func (*RunReleaseParams) Class() lease.Durability { return lease.SyncCritical }

// Validate checks the identity and the reason.
func (p *RunReleaseParams) Validate() error {
	if err := runs.ValidateFenced(p.ID, p.Fence); err != nil {
		return err
	}
	return runs.ValidateReason(p.Reason)
}
