package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// maxEmitBatch bounds one emit request (the body cap bounds its bytes).
const maxEmitBatch = 1000

// emit is POST /v1/runs/{id}/events: the batch is durable when answered
// (one transaction, DurableBatched), accepted only while the run is held
// under fence. Events are keyed (run, fence, seq), so a retried batch is
// applied once; seq is the runner's, 1, 2, 3 … within its fence.
func (s *Server) emit(w http.ResponseWriter, r *http.Request) {
	id, err := runID(r)
	var req emitRequest
	if err == nil {
		err = s.decode(w, r, &req)
	}
	if err == nil && (len(req.Events) == 0 || len(req.Events) > maxEmitBatch) {
		err = &journal.InputError{Field: "events", Problem: fmt.Sprintf("%d events: a batch holds 1 to %d", len(req.Events), maxEmitBatch)}
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	evs := make([]driver.RunEventInsert, len(req.Events))
	for i, e := range req.Events {
		evs[i] = driver.RunEventInsert{RunID: id, Fence: req.Fence, Seq: e.Seq, Kind: string(e.Kind), Payload: e.Payload}
	}
	res, err := s.d.RunEventAppend(r.Context(), &driver.RunEventAppendParams{Events: evs})
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if len(res.Fenced) > 0 {
		// One run, one fence: the store refused the batch as a whole.
		// Name the fence in force, as the other fenced writes do.
		s.problem(w, r, s.refusal(r.Context(), "emit", id, req.Fence))
		return
	}
	writeJSON(w, emitResponse{Accepted: len(evs), RunwayMS: ms(s.book.runway(driver.RunLeaseRef{ID: id, Fence: req.Fence}))})
}

// refusal explains a fenced batch write from the run as it is now.
func (s *Server) refusal(ctx context.Context, op string, id, fence int64) error {
	cur, err := s.d.RunGet(ctx, &driver.RunGetParams{ID: id})
	if err != nil {
		cur = nil
	}
	s.book.forget(driver.RunLeaseRef{ID: id, Fence: fence})
	return driver.ClassifyRefusal(op, id, fence, "", cur, s.cfg.Clock.Now(), false)
}

// events is GET /v1/runs/{id}/events?after_fence=&after_seq=&limit=: the
// run's durable events after the cursor, in (fence, seq) order. Resume
// from the last event's fence and seq.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	id, err := runID(r)
	q := r.URL.Query()
	var afterFence, afterSeq, limit int64
	for _, p := range []struct {
		name string
		v    *int64
	}{{"after_fence", &afterFence}, {"after_seq", &afterSeq}, {"limit", &limit}} {
		if err == nil {
			err = queryInt(q.Get(p.name), p.name, p.v)
		}
	}
	if err == nil && (limit < 0 || limit > driver.MaxRunEventListLimit) {
		err = &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d is outside 0..%d", limit, driver.MaxRunEventListLimit)}
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if _, err := s.c.Run(r.Context(), id); err != nil {
		s.problem(w, r, err)
		return
	}
	es, err := s.c.Events(r.Context(), id, afterFence, afterSeq, int(limit))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	out := eventsResponse{Events: make([]eventBody, len(es))}
	for i, e := range es {
		out.Events[i] = eventBody{Fence: e.Fence, Seq: e.Seq, Kind: e.Kind, Payload: raw(e.Payload), CreatedAt: stamp(e.CreatedAt)}
	}
	writeJSON(w, out)
}

// queryInt reads an optional decimal query parameter.
func queryInt(v, name string, into *int64) error {
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return &journal.InputError{Field: name, Problem: fmt.Sprintf("%.40q is not an integer", v)}
	}
	*into = n
	return nil
}
