package server

import "net/http"

// route is one endpoint. The table is the one list of what the server
// serves: New registers it, and TestOpenAPIMatchesRoutes holds
// openapi.json to it.
type route struct {
	method, path string
	handler      http.Handler
}

func (s *Server) routes() []route {
	h := func(method, path string, f http.HandlerFunc) route { return route{method, path, f} }
	return []route{
		h("GET", "/healthz", s.healthz),
		h("GET", "/readyz", s.readyz),
		h("GET", "/metrics", s.metrics.handler().ServeHTTP),
		h("GET", "/openapi.json", serveOpenAPI),

		h("POST", "/v1/runs", s.enqueue),
		h("GET", "/v1/runs", s.listRuns),
		h("GET", "/v1/runs/{id}", s.getRun),
		h("POST", "/v1/runs/claim", s.claim),
		h("POST", "/v1/runs/{id}/renew", s.renew),
		h("POST", "/v1/runs/{id}/complete", s.complete),
		h("POST", "/v1/runs/{id}/fail", s.fail),
		h("POST", "/v1/runs/{id}/block", s.block),
		h("POST", "/v1/runs/{id}/cancel", s.cancel),
		h("POST", "/v1/runs/{id}/unblock", s.unblock),
		h("POST", "/v1/runs/{id}/retry", s.retry),
		h("POST", "/v1/runs/{id}/snooze", s.snooze), // snooze.go

		h("POST", "/v1/runs/{id}/effects/begin", s.effectBegin),
		h("POST", "/v1/runs/{id}/effects/commit", s.effectCommit),
		h("POST", "/v1/runs/{id}/effects/resolve", s.effectResolve),
		h("GET", "/v1/runs/{id}/effects", s.effects),

		h("POST", "/v1/runs/{id}/events", s.emit),
		h("GET", "/v1/runs/{id}/events", s.events),

		// Auth (tokens.go; every route's rule is in authz.go).
		h("POST", "/v1/tokens", s.createToken),
		h("GET", "/v1/tokens", s.listTokens),
		h("POST", "/v1/tokens/{id}/revoke", s.revokeToken),

		// Heartbeat mode of the attached workers (admin_mode.go).
		h("GET", "/v1/admin/mode", s.getModes),
		h("POST", "/v1/admin/mode", s.setModes),

		// Worlds (worlds.go).
		h("POST", "/v1/worlds", s.createWorld),
		h("GET", "/v1/worlds/{world}", s.getWorld),
		h("POST", "/v1/worlds/{world}/grant", s.grantWorld),
		h("POST", "/v1/worlds/{world}/renew", s.renewWorld),
		h("POST", "/v1/worlds/{world}/handoff", s.handoffWorld),
		h("POST", "/v1/worlds/{world}/revoke", s.revokeWorld),
		h("POST", "/v1/worlds/{world}/append", s.appendWorld),
		h("POST", "/v1/worlds/{world}/commands", s.submitCommand),
		h("GET", "/v1/worlds/{world}/journal", s.readJournal),

		// Read-only views for the dashboard (dashboard_api.go).
		h("GET", "/v1/whoami", s.whoami),
		h("GET", "/v1/stats/runs", s.runStats),
		h("GET", "/v1/stats/health", s.health),
		h("GET", "/v1/stats/clock", s.clockDoctor), // dashboard_doctor.go
		h("GET", "/v1/leases", s.leases),
		h("GET", "/v1/worlds", s.listWorlds),
		h("GET", "/v1/worlds/{world}/audit", s.auditWorld),

		// Streams and remote write-behind (issue 12, srvstream).
		h("GET", "/v1/runs/{id}/events/stream", s.eventsStream),
		h("GET", "/v1/worlds/{world}/journal/stream", s.journalStream),
		h("POST", "/v1/runs/complete", s.completeMany),
		h("GET", "/v1/queues/{queue}/events/stream", s.queueEventsStream), // stream_queue.go
	}
}
