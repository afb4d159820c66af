package server

import (
	"fmt"
	"net/http"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/journal"
)

// maxEnqueueBatch bounds one enqueue request (the body cap bounds its
// bytes): one transaction per request.
const maxEnqueueBatch = 1000

// enqueue is POST /v1/runs: the batch in one transaction, in order,
// through Client.Enqueue (its queue rule included). A run whose unique key
// is taken answers the first run with existing: true — also under
// concurrency, since the store decides.
func (s *Server) enqueue(w http.ResponseWriter, r *http.Request) {
	var req enqueueRequest
	if err := s.decode(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	if n := len(req.Runs); n == 0 || n > maxEnqueueBatch {
		s.problem(w, r, &journal.InputError{Field: "runs", Problem: fmt.Sprintf("%d runs: a batch holds 1 to %d", n, maxEnqueueBatch)})
		return
	}
	in := make([]leasehold.Enqueue, len(req.Runs))
	for i, e := range req.Runs {
		if err := allow(r, auth.Work, auth.Queue, string(e.Queue)); err != nil { // every run's queue, before any is written
			s.problem(w, r, err)
			return
		}
		in[i] = e.enqueue()
	}
	out, err := s.c.Enqueue(r.Context(), in...)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	s.wake()
	resp := enqueueResponse{Runs: make([]enqueuedBody, len(out))}
	fresh := int64(0)
	for i, e := range out {
		resp.Runs[i] = enqueuedBody{Run: runOf(e.Run), Existing: e.Existing}
		if !e.Existing {
			fresh++
		}
	}
	s.rate.add(s.cfg.Clock.Now(), func(c *rateCounts) { c.Enqueued += fresh })
	writeJSONStatus(w, http.StatusCreated, resp)
}
