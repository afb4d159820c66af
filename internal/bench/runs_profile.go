package bench

import (
	"context"
	"sync/atomic"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
)

// RunPathCounts is what the claim → handler → complete path sent to the
// store: driver calls by kind and the runs they carried. Every write call
// is one transaction and one commit on both stores, so commits per run is
// (claims + completions + renewals + events) / runs — a figure the load on
// the machine does not bend, unlike runs/s.
type RunPathCounts struct {
	Claims, Claimed         int64 // RunClaim calls, runs they returned
	CompleteMany, Completed int64 // RunCompleteMany calls, runs they completed
	Complete                int64 // single RunComplete calls
	Renew, RenewMany        int64 // renewal calls (sync heartbeats)
	EventAppend             int64 // RunEventAppend calls
}

// Commits is the number of write transactions counted.
func (c RunPathCounts) Commits() int64 {
	return c.Claims + c.CompleteMany + c.Complete + c.Renew + c.RenewMany + c.EventAppend
}

// PathCounter wraps a store and counts the calls of the run path; the
// counts are read with Counts. The wrapper adds two atomic adds per call.
type PathCounter struct {
	scheduler.Store
	claims, claimed, completeMany, completed, complete, renew, renewMany, events atomic.Int64
}

var _ scheduler.Store = (*PathCounter)(nil)

// Counts reads the counters.
func (s *PathCounter) Counts() RunPathCounts {
	return RunPathCounts{
		Claims: s.claims.Load(), Claimed: s.claimed.Load(),
		CompleteMany: s.completeMany.Load(), Completed: s.completed.Load(), Complete: s.complete.Load(),
		Renew: s.renew.Load(), RenewMany: s.renewMany.Load(), EventAppend: s.events.Load(),
	}
}

// RunClaim counts one call and the runs it claimed.
func (s *PathCounter) RunClaim(ctx context.Context, p *driver.RunClaimParams) ([]*driver.Run, error) {
	out, err := s.Store.RunClaim(ctx, p)
	s.claims.Add(1)
	s.claimed.Add(int64(len(out)))
	return out, err
}

// RunCompleteMany counts one call and the runs it completed.
func (s *PathCounter) RunCompleteMany(ctx context.Context, p *driver.RunCompleteManyParams) (*driver.RunCompleteManyResult, error) {
	out, err := s.Store.RunCompleteMany(ctx, p)
	s.completeMany.Add(1)
	if out != nil {
		s.completed.Add(int64(len(out.Completed)))
	}
	return out, err
}

// RunComplete counts one call.
func (s *PathCounter) RunComplete(ctx context.Context, p *driver.RunCompleteParams) (*driver.Run, error) {
	s.complete.Add(1)
	return s.Store.RunComplete(ctx, p)
}

// RunRenew counts one call.
func (s *PathCounter) RunRenew(ctx context.Context, p *driver.RunRenewParams) (*driver.Run, error) {
	s.renew.Add(1)
	return s.Store.RunRenew(ctx, p)
}

// RunRenewMany counts one call.
func (s *PathCounter) RunRenewMany(ctx context.Context, p *driver.RunRenewManyParams) (*driver.RunRenewManyResult, error) {
	s.renewMany.Add(1)
	return s.Store.RunRenewMany(ctx, p)
}

// RunEventAppend counts one call.
func (s *PathCounter) RunEventAppend(ctx context.Context, p *driver.RunEventAppendParams) (*driver.RunEventAppendResult, error) {
	s.events.Add(1)
	return s.Store.RunEventAppend(ctx, p)
}
