package server

import "net/http"

// retryRequest is POST /v1/runs/{id}/retry. Fence, when given (not 0), is
// the fence the caller saw: the retry applies only while the run still
// stands at it, so two operators looking at the same page retry it once
// (the second is answered 409 fenced).
type retryRequest struct {
	Fence int64 `json:"fence"`
}

// retry is POST /v1/runs/{id}/retry: River's JobRetry for a failed or
// cancelled run — available at once, with one attempt more when its
// budget is spent (leasehold.Client.Retry). It is the queue's work or
// admin scope (authz.go): whoever may run a queue's runs may send one
// round again, as they may fail it back to available. A run in another
// state is 409 conflict; one moved past the fence sent, 409 fenced.
func (s *Server) retry(w http.ResponseWriter, r *http.Request) {
	id, req, ok := idAndBody[retryRequest](s, w, r)
	if !ok {
		return
	}
	run, err := s.c.Retry(r.Context(), id, req.Fence)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	s.wake() // a long-polling claim on its queue may take it at once
	writeJSON(w, runResponse{Run: runOf(run)})
}
