package server

import (
	"net/http"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// snoozeRequest is POST /v1/runs/{id}/snooze. MaxSnoozes is the runner's
// bound on the run's snoozes over its life (the in-process worker's
// WorkerConfig.MaxSnoozes); 0 takes runs.DefaultMaxSnoozes.
type snoozeRequest struct {
	Fence      int64 `json:"fence"`
	DelayMS    int64 `json:"delay_ms"`
	MaxSnoozes int   `json:"max_snoozes"`
}

// snooze is POST /v1/runs/{id}/snooze: the remote form of returning
// leasehold.Snooze from a handler. The run goes back to available after
// delay_ms and its attempt is given back (the next claim counts the same
// attempt again), fenced like a completion: the store applies it only
// WHERE fence = $fence AND state = 'running' AND snoozes < max_snoozes
// (driver.RunStore.RunSnooze). A run at its bound is the conflict problem
// and is still held: the runner then fails the attempt, as the in-process
// worker does, so a handler that snoozes forever is stopped loudly.
func (s *Server) snooze(w http.ResponseWriter, r *http.Request) {
	id, req, ok := idAndBody[snoozeRequest](s, w, r)
	if !ok {
		return
	}
	if req.MaxSnoozes == 0 {
		req.MaxSnoozes = runs.DefaultMaxSnoozes
	}
	ref := driver.RunLeaseRef{ID: id, Fence: req.Fence}
	run, err := s.d.RunSnooze(r.Context(), &driver.RunSnoozeParams{ID: id, Fence: req.Fence, Delay: msDuration(req.DelayMS), MaxSnoozes: req.MaxSnoozes})
	if err != nil {
		// A refusal for the bound leaves the run held: its lease stays
		// in the book for the fail the runner sends next.
		s.forgetIfRefused(ref, err)
		s.problem(w, r, err)
		return
	}
	s.book.forget(ref)
	if req.DelayMS <= 0 {
		s.wake() // available now: long-polling claims may take it
	}
	writeJSON(w, runResponse{Run: runOf(run)})
}
