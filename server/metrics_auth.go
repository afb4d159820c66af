package server

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leasehold/leasehold/internal/httpapi"
)

// authRefusals counts requests refused for auth — no or a bad token, a
// scope that does not allow the call, a token over its rate — by that
// reason: a climbing unauthorized count is someone guessing, or a client
// whose token was revoked.
func newAuthRefusals() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "leasehold_http_auth_refusals_total",
		Help: "HTTP API requests refused by auth, by reason (unauthorized, forbidden, rate-limited)."}, []string{"reason"})
}

// countAuthRefusal counts p if it is an auth refusal.
func (s *Server) countAuthRefusal(p *Problem) {
	switch p.Type {
	case ProblemUnauthorized, ProblemForbidden, ProblemRateLimited:
		s.authRefusals.WithLabelValues(strings.TrimPrefix(p.Type, httpapi.ProblemBase)).Inc()
	}
}
