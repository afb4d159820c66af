package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/auth"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// completeMany is POST /v1/runs/complete: a batch of completions in one
// store call — one statement on Postgres, one transaction on SQLite, one
// commit (driver.RunCompleteMany) — each applied WHERE id AND fence AND
// state = 'running', exactly as POST /v1/runs/{id}/complete. The answer
// lists the runs completed and, by index into the batch, the completions
// refused (fenced out, finished, missing: those runs are unchanged; read
// one to tell which). A bad item refuses the whole batch (invalid),
// nothing written.
func (s *Server) completeMany(w http.ResponseWriter, r *http.Request) {
	var req completeManyRequest
	err := s.decode(w, r, &req)
	if err == nil && (len(req.Runs) == 0 || len(req.Runs) > driver.MaxRunCompleteBatch) {
		err = &journal.InputError{Field: "runs", Problem: fmt.Sprintf("%d completions: a batch holds 1 to %d", len(req.Runs), driver.MaxRunCompleteBatch)}
	}
	if err == nil {
		err = s.allowCompletions(r, req.Runs)
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	p := &driver.RunCompleteManyParams{Runs: make([]driver.RunCompletion, len(req.Runs))}
	for i, c := range req.Runs {
		p.Runs[i] = driver.RunCompletion{ID: c.ID, Fence: c.Fence, Result: c.Result}
	}
	res, err := s.d.RunCompleteMany(r.Context(), p)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	for _, c := range req.Runs { // completed or refused, the lease is over
		s.book.forget(driver.RunLeaseRef{ID: c.ID, Fence: c.Fence})
	}
	s.rate.add(s.cfg.Clock.Now(), func(c *rateCounts) { c.Completed += int64(len(res.Completed)) })
	out := completeManyResponse{Completed: res.Completed, Fenced: res.Fenced}
	if out.Completed == nil {
		out.Completed = []int64{}
	}
	if out.Fenced == nil {
		out.Fenced = []int{}
	}
	writeJSON(w, out)
}

// allowCompletions checks the token may work every run's queue, before
// anything is written: at once for a token that allows every queue, else
// by reading each run (a run that does not exist is left to the store,
// which refuses its completion as fenced).
func (s *Server) allowCompletions(r *http.Request, items []completeManyItem) error {
	if p := principalOf(r.Context()); p != nil && p.scopes.AllowsAll(auth.Work, auth.Queue) {
		return nil
	}
	for _, c := range items {
		run, err := s.c.Run(r.Context(), c.ID)
		if errors.Is(err, leasehold.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := allow(r, auth.Work, auth.Queue, run.Queue); err != nil {
			return err
		}
	}
	return nil
}
