package server

import (
	"fmt"
	"net/http"

	"github.com/leasehold/leasehold/auth"
)

// rule is who may call a route: what a token's scopes must allow, and
// where the queue or world they are checked against comes from.
type rule struct {
	from   ruleFrom
	action auth.Action
}

type ruleFrom int

const (
	fromAdminToken ruleFrom = iota // the zero rule: a bare admin token (token management, and any route without a rule)
	fromPublic                     // no token: /healthz only
	fromAnyToken                   // any valid token: readiness, metrics, the OpenAPI document
	fromHandler                    // the handler checks, once it has read the body or query (allow)
	fromRun                        // the queue of the run in {id}
	fromWorld                      // the world in {world}
	fromQueue                      // the queue in {queue}
)

// rules maps each route ("METHOD path", as routes.go lists it) to its
// rule. A route missing here gets the zero rule — a bare admin token — so
// a new route is closed until it is given a rule here;
// TestEveryRouteHasARule lists the routes that lack one.
var rules = map[string]rule{
	"GET /healthz":      {from: fromPublic},
	"GET /readyz":       {from: fromAnyToken},
	"GET /metrics":      {from: fromAnyToken},
	"GET /openapi.json": {from: fromAnyToken},

	"POST /v1/runs":                      {from: fromHandler, action: auth.Work},
	"GET /v1/runs":                       {from: fromHandler, action: auth.Read},
	"GET /v1/runs/{id}":                  {from: fromRun, action: auth.Read},
	"POST /v1/runs/claim":                {from: fromHandler, action: auth.Work},
	"POST /v1/runs/{id}/renew":           {from: fromRun, action: auth.Work},
	"POST /v1/runs/{id}/complete":        {from: fromRun, action: auth.Work},
	"POST /v1/runs/{id}/fail":            {from: fromRun, action: auth.Work},
	"POST /v1/runs/{id}/block":           {from: fromRun, action: auth.Work},
	"POST /v1/runs/{id}/snooze":          {from: fromRun, action: auth.Work},
	"POST /v1/runs/{id}/cancel":          {from: fromRun, action: auth.Admin},
	"POST /v1/runs/{id}/unblock":         {from: fromRun, action: auth.Admin},
	"POST /v1/runs/{id}/retry":           {from: fromRun, action: auth.Work}, // work or admin on the run's queue
	"POST /v1/runs/{id}/effects/begin":   {from: fromRun, action: auth.Work},
	"POST /v1/runs/{id}/effects/commit":  {from: fromRun, action: auth.Work},
	"POST /v1/runs/{id}/effects/resolve": {from: fromRun, action: auth.Work},
	"GET /v1/runs/{id}/effects":          {from: fromRun, action: auth.Read},
	"POST /v1/runs/{id}/events":          {from: fromRun, action: auth.Work},
	"GET /v1/runs/{id}/events":           {from: fromRun, action: auth.Read},

	"POST /v1/tokens":             {from: fromAdminToken},
	"GET /v1/tokens":              {from: fromAdminToken},
	"POST /v1/tokens/{id}/revoke": {from: fromAdminToken},

	"GET /v1/admin/mode":  {from: fromAdminToken},
	"POST /v1/admin/mode": {from: fromAdminToken},

	"POST /v1/worlds":                  {from: fromHandler, action: auth.Admin},
	"GET /v1/worlds/{world}":           {from: fromWorld, action: auth.Read},
	"POST /v1/worlds/{world}/grant":    {from: fromWorld, action: auth.Admin},
	"POST /v1/worlds/{world}/revoke":   {from: fromWorld, action: auth.Admin},
	"POST /v1/worlds/{world}/renew":    {from: fromWorld, action: auth.Work},
	"POST /v1/worlds/{world}/handoff":  {from: fromWorld, action: auth.Work},
	"POST /v1/worlds/{world}/append":   {from: fromWorld, action: auth.Work},
	"POST /v1/worlds/{world}/commands": {from: fromWorld, action: auth.Work},
	"GET /v1/worlds/{world}/journal":   {from: fromWorld, action: auth.Read},

	"GET /v1/whoami":                        {from: fromAnyToken},                   // a token's own scopes
	"GET /v1/stats/runs":                    {from: fromHandler, action: auth.Read}, // the queues the token may read
	"GET /v1/leases":                        {from: fromHandler, action: auth.Read}, // every queue's reader only
	"GET /v1/stats/health":                  {from: fromHandler, action: auth.Read}, // every queue's reader only
	"GET /v1/stats/clock":                   {from: fromHandler, action: auth.Read}, // every queue's reader only
	"GET /v1/worlds":                        {from: fromHandler, action: auth.Read}, // the worlds the token may read
	"GET /v1/worlds/{world}/audit":          {from: fromWorld, action: auth.Read},
	"GET /v1/runs/{id}/events/stream":       {from: fromRun, action: auth.Read},
	"POST /v1/runs/complete":                {from: fromHandler, action: auth.Work},
	"GET /v1/worlds/{world}/journal/stream": {from: fromWorld, action: auth.Read},
	"GET /v1/queues/{queue}/events/stream":  {from: fromQueue, action: auth.Read},
}

// isPublic reports whether the route answers without a token.
func isPublic(pattern string) bool { return rules[pattern].from == fromPublic }

// guard checks rt's rule against the request's token before rt's
// handler runs. The token was authenticated already (serveHTTP).
func (s *Server) guard(rt route) http.Handler {
	ru := rules[rt.method+" "+rt.path]
	if ru.from == fromPublic || ru.from == fromAnyToken || ru.from == fromHandler {
		return rt.handler
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.check(r, ru); err != nil {
			s.problem(w, r, err)
			return
		}
		rt.handler.ServeHTTP(w, r)
	})
}

func (s *Server) check(r *http.Request, ru rule) error {
	switch ru.from {
	case fromAdminToken:
		return allow(r, auth.Admin, auth.Token, "")
	case fromWorld:
		return allow(r, ru.action, auth.World, r.PathValue("world"))
	case fromQueue:
		return allow(r, ru.action, auth.Queue, r.PathValue("queue"))
	case fromRun:
		p := principalOf(r.Context())
		if p != nil && p.scopes.AllowsAll(ru.action, auth.Queue) {
			return nil // no need to look the run's queue up
		}
		id, err := runID(r)
		if err != nil {
			return err
		}
		run, err := s.c.Run(r.Context(), id)
		if err != nil {
			return err
		}
		return allow(r, ru.action, auth.Queue, run.Queue)
	}
	return fmt.Errorf("server: no check for rule %d", ru.from)
}
