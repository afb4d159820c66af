package server

// RouteKeys lists "METHOD path" of every registered route, for the
// OpenAPI test.
func (s *Server) RouteKeys() []string {
	var out []string
	for _, rt := range s.routes() {
		out = append(out, rt.method+" "+rt.path)
	}
	return out
}

// ProblemTypes are the problem type URIs the server answers with.
var ProblemTypes = []string{ProblemFenced, ProblemLeaseLost, ProblemRunway, ProblemUncertain, ProblemUnknownQueue,
	ProblemInvalid, ProblemTooLarge, ProblemNotFound, ProblemConflict, ProblemClosed, ProblemUnavailable,
	ProblemNotMigrated, ProblemInternal, ProblemMethod,
	ProblemUnauthorized, ProblemForbidden, ProblemRateLimited,
	ProblemNotHolder, ProblemSeenBehind, ProblemLeaseHeld, ProblemBadSignature,
	ProblemOverloaded, ProblemKeyReused, ProblemUnknownOutcome, ProblemCommand, ProblemProgram}

// BeginStopping starts the shutdown's first step (as Serve does when told
// to stop) without closing anything.
func (s *Server) BeginStopping() { s.beginStopping() }

// HasRule reports whether a route ("METHOD path") has its own rule in
// authz.go (one without falls back to a bare admin token).
func HasRule(key string) bool { _, ok := rules[key]; return ok }

// InFlight is the number of requests being answered.
func (s *Server) InFlight() int64 { return s.inFlight.Load() }
