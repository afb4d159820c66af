package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// claim is POST /v1/runs/claim: up to limit runs of queue for owner, each
// leased for T_lease from the store's now, with the runway the server
// vouches for. With wait_ms it long-polls: when nothing is available it
// looks again each time this server enqueues, every ClaimPoll, and once
// more at the end of the wait (bounded by MaxClaimWait), and answers an
// empty list if the wait ran out.
//
// A claim that the client gives up on mid-flight (its connection closed
// after the store committed) leaves runs leased to owner that nobody
// works: the reclaimer returns them after T_lease, as for a crashed
// worker. That is the price of at-least-once delivery and is safe: the
// fence, not the claim, guards every write.
func (s *Server) claim(w http.ResponseWriter, r *http.Request) {
	var req claimRequest
	if err := s.decode(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	if err := req.validate(s.cfg.MaxClaimWait); err != nil {
		s.problem(w, r, err)
		return
	}
	if err := allow(r, auth.Work, auth.Queue, string(req.Queue)); err != nil {
		s.problem(w, r, err)
		return
	}
	if s.isStopping() {
		s.problem(w, r, fmt.Errorf("claim: the server is shutting down: %w", leasehold.ErrClosed))
		return
	}
	ctx := r.Context()
	deadline := s.cfg.Clock.Now().Add(msDuration(req.WaitMS))
	for {
		wake := s.enqueuedCh() // taken before the claim, so an enqueue after it is not missed
		got, err := s.claimOnce(ctx, req)
		if err != nil {
			s.problem(w, r, err)
			return
		}
		left := deadline.Sub(s.cfg.Clock.Now())
		if len(got.Runs) > 0 || left <= 0 {
			writeJSON(w, got)
			return
		}
		if !s.waitForWork(ctx, wake, min(left, s.cfg.ClaimPoll)) {
			writeJSON(w, got) // the caller left or the server is stopping
			return
		}
	}
}

// waitForWork waits for an enqueue through this server or d; false when
// ctx ended or shutdown began.
func (s *Server) waitForWork(ctx context.Context, wake <-chan struct{}, d time.Duration) bool {
	t, tc := s.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-wake:
	case <-tc:
	case <-ctx.Done():
		return false
	case <-s.stopping:
		return false
	}
	return true
}

func (s *Server) claimOnce(ctx context.Context, req claimRequest) (leasedRuns, error) {
	sent := s.cfg.Clock.Now() // the runway's origin: before the write is sent
	rs, err := s.d.RunClaim(ctx, &driver.RunClaimParams{Queue: string(req.Queue), Owner: string(req.Owner),
		Limit: req.Limit, Lease: s.cfg.Timing.Lease})
	if err != nil {
		return leasedRuns{}, fmt.Errorf("claiming runs: %w", err)
	}
	if len(rs) > 0 {
		s.clock.observe(sent, s.cfg.Clock.Now(), rs[0]) // clockwatch.go
	}
	out := leasedRuns{Runs: make([]leasedRun, len(rs))}
	for _, run := range rs {
		s.book.confirm(driver.RunLeaseRef{ID: run.ID, Fence: run.Fence}, run.Owner, sent)
	}
	s.claims.Add(int64(len(rs)))
	s.rate.add(s.cfg.Clock.Now(), func(c *rateCounts) { c.Claimed += int64(len(rs)) })
	s.metrics.claimed.Add(float64(len(rs)))
	for i, run := range rs {
		out.Runs[i] = leasedRun{runBody: runOf(run), RunwayMS: ms(s.book.runway(driver.RunLeaseRef{ID: run.ID, Fence: run.Fence}))}
	}
	return out, nil
}

// validate checks what the driver's rules do not: the wait, and the
// defaults of limit.
func (req *claimRequest) validate(maxWait time.Duration) error {
	if req.Limit == 0 {
		req.Limit = 1
	}
	if req.Limit < 0 || req.Limit > runs.MaxClaimBatch {
		return &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d: a claim takes 1 to %d runs", req.Limit, runs.MaxClaimBatch)}
	}
	if req.WaitMS < 0 || msDuration(req.WaitMS) > maxWait {
		return &journal.InputError{Field: "wait_ms", Problem: fmt.Sprintf("%d: the long poll waits 0 to %d ms", req.WaitMS, maxWait.Milliseconds())}
	}
	return nil
}
