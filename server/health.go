package server

import (
	"context"
	"net/http"
	"time"

	"github.com/leasehold/leasehold/internal/httpapi"
)

// readyTimeout bounds /readyz's store check: a load balancer's probe must
// not hang on a store that does not answer.
const readyTimeout = 2 * time.Second

// healthz is GET /healthz: the process is up and serving. It asks nothing
// of the store, so a slow store does not get the process restarted.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]string{"status": "ok"})
}

// readyz is GET /readyz: the store answers with the schema this binary
// expects, and the server is not shutting down. Otherwise 503 with the
// problem that says why.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.isStopping() {
		httpapi.WriteProblem(w, http.StatusServiceUnavailable, 0, &Problem{Type: ProblemClosed, Title: "closed",
			Status: http.StatusServiceUnavailable, Detail: "shutting down"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := s.d.SchemaCheck(ctx); err != nil {
		p := problemOf(err)
		p.Status = http.StatusServiceUnavailable // not ready, whatever the cause
		httpapi.WriteProblem(w, http.StatusServiceUnavailable, 0, p)
		return
	}
	writeJSON(w, map[string]string{"status": "ready"})
}

func writeJSON(w http.ResponseWriter, v any) { httpapi.WriteJSON(w, v) }

func writeJSONStatus(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	httpapi.WriteJSON(w, v)
}
