package server

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/runs"
)

// The runner's fenced writes. Each carries the fence the runner claimed
// under; the store applies it only WHERE fence = $fence AND state =
// 'running' (driver.RunStore), so a runner whose lease was reclaimed,
// cancelled or claimed again is refused with the fenced problem and
// changes nothing.

// renew is POST /v1/runs/{id}/renew: a remote heartbeat, made in the
// runner's heartbeat mode (remote_mode.go). In writebehind (the default),
// for a lease this server keeps live for this owner (SPEC §2): the keeper
// marks it, the next drain renews it together with every other remote
// runner's in one statement, and the answer — with no store call —
// carries the runway the last confirmed write gives. In sync and dark the
// fenced renewal is written before the answer (dark marks it for the
// drain too). A lease the server does not keep (claimed through another
// replica, given up by the keeper) or another owner's is renewed
// synchronously in every mode, fenced by the store. The answer's renewal
// says which it was: "writebehind", "sync" or "dark".
func (s *Server) renew(w http.ResponseWriter, r *http.Request) {
	id, req, ok := idAndBody[renewRequest](s, w, r)
	if !ok {
		return
	}
	ref := driver.RunLeaseRef{ID: id, Fence: req.Fence}
	owner := string(req.Owner)
	mode := s.book.modeOf(owner)
	if mode == keeper.ModeWriteBehind && s.book.renew(ref, owner) {
		s.metrics.renewals.WithLabelValues("writebehind").Inc()
		writeJSON(w, renewResponse{ID: id, Fence: req.Fence, RunwayMS: ms(s.book.runway(ref)), Renewal: "writebehind"})
		return
	}
	_, runway, err := s.renewNow(r, id, req.Fence, owner)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	how := "sync"
	if mode == keeper.ModeDark {
		s.book.shadow(ref, owner)
		how = "dark"
	}
	s.metrics.renewals.WithLabelValues(how).Inc()
	writeJSON(w, renewResponse{ID: id, Fence: req.Fence, RunwayMS: ms(runway), Renewal: how})
}

// renewNow renews a lease synchronously and records its send time.
func (s *Server) renewNow(r *http.Request, id, fence int64, owner string) (*driver.Run, time.Duration, error) {
	ref := driver.RunLeaseRef{ID: id, Fence: fence}
	sent := s.cfg.Clock.Now()
	run, err := s.d.RunRenew(r.Context(), &driver.RunRenewParams{ID: id, Fence: fence, Owner: owner, Lease: s.cfg.Timing.Lease})
	if err != nil {
		s.forgetIfRefused(ref, err)
		return nil, 0, err
	}
	s.clock.observe(sent, s.cfg.Clock.Now(), run) // clockwatch.go
	s.book.confirm(ref, owner, sent)
	return run, s.book.runway(ref), nil
}

// forgetIfRefused drops a lease the store refused: it is over.
func (s *Server) forgetIfRefused(ref driver.RunLeaseRef, err error) {
	if errors.Is(err, leasehold.ErrFenced) || errors.Is(err, leasehold.ErrLeaseExpired) || errors.Is(err, leasehold.ErrNotFound) {
		s.book.forget(ref)
	}
}

// finish runs one of the final fenced writes and answers the run.
func (s *Server) finish(w http.ResponseWriter, r *http.Request, id, fence int64, write func() (*driver.Run, error)) {
	ref := driver.RunLeaseRef{ID: id, Fence: fence}
	run, err := write()
	if err != nil {
		s.forgetIfRefused(ref, err)
		s.problem(w, r, err)
		return
	}
	s.book.forget(ref)
	s.rate.add(s.cfg.Clock.Now(), func(c *rateCounts) {
		switch run.State {
		case runs.StateCompleted:
			c.Completed++
		case runs.StateFailed, runs.StateAvailable: // a failed attempt, final or to be retried
			c.Failed++
		}
	})
	writeJSON(w, runResponse{Run: runOf(run)})
}

// complete is POST /v1/runs/{id}/complete.
func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	id, req, ok := idAndBody[completeRequest](s, w, r)
	if !ok {
		return
	}
	s.finish(w, r, id, req.Fence, func() (*driver.Run, error) {
		return s.d.RunComplete(r.Context(), &driver.RunCompleteParams{ID: id, Fence: req.Fence, Result: req.Result})
	})
}

// fail is POST /v1/runs/{id}/fail: the attempt failed; the run is retried
// after retry_after_ms, or the server's backoff for its attempt (runs.Backoff
// defaults), until its attempts are spent.
func (s *Server) fail(w http.ResponseWriter, r *http.Request) {
	id, req, ok := idAndBody[failRequest](s, w, r)
	if !ok {
		return
	}
	s.finish(w, r, id, req.Fence, func() (*driver.Run, error) {
		var retry time.Duration
		if req.RetryAfterMS != nil {
			retry = msDuration(*req.RetryAfterMS)
		} else {
			run, err := s.d.RunGet(r.Context(), &driver.RunGetParams{ID: id})
			if err != nil {
				return nil, err
			}
			retry = runs.Backoff{}.Delay(run.Attempt, rand.Float64())
		}
		return s.d.RunFail(r.Context(), &driver.RunFailParams{ID: id, Fence: req.Fence, Reason: string(req.Reason), RetryAfter: retry})
	})
}

// block is POST /v1/runs/{id}/block: the lease is released and the run
// parked until an unblock.
func (s *Server) block(w http.ResponseWriter, r *http.Request) {
	id, req, ok := idAndBody[blockRequest](s, w, r)
	if !ok {
		return
	}
	s.finish(w, r, id, req.Fence, func() (*driver.Run, error) {
		return s.d.RunBlock(r.Context(), &driver.RunBlockParams{ID: id, Fence: req.Fence, Reason: string(req.Reason)})
	})
}

// cancel is POST /v1/runs/{id}/cancel: an operator action (SPEC §3), no
// fence; the store increments the fence, so a running holder is fenced
// out of its next write.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	id, req, ok := idAndBody[cancelRequest](s, w, r)
	if !ok {
		return
	}
	run, err := s.c.Cancel(r.Context(), id, string(req.Reason))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, runResponse{Run: runOf(run)})
}

// unblock is POST /v1/runs/{id}/unblock: an operator action, no fence; a
// blocked run becomes available at once (conflict if it is not blocked).
func (s *Server) unblock(w http.ResponseWriter, r *http.Request) {
	id, err := runID(r)
	if err == nil {
		err = s.decode(w, r, &struct{}{})
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	run, err := s.c.Unblock(r.Context(), id)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	s.wake()
	writeJSON(w, runResponse{Run: runOf(run)})
}

// getRun is GET /v1/runs/{id}.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	id, err := runID(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	run, err := s.c.Run(r.Context(), id)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, runResponse{Run: runOf(run)})
}
