package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// ProblemBase prefixes every problem type URI. The URIs are identifiers
// a caller matches, stable across releases; they need not resolve.
const ProblemBase = "https://leasehold.dev/problems/"

// The problem types both surfaces answer with. A surface adds its own
// (host: not-holder, overloaded …; server: fenced, lease-lost …) under
// ProblemBase.
const (
	ProblemInvalid  = ProblemBase + "invalid"
	ProblemTooLarge = ProblemBase + "too-large"
	ProblemNotFound = ProblemBase + "not-found"
	ProblemConflict = ProblemBase + "conflict"
	ProblemClosed   = ProblemBase + "closed"
	ProblemInternal = ProblemBase + "internal"
)

// ContentTypeProblem is the media type of a problem document (RFC 9457 §3).
const ContentTypeProblem = "application/problem+json"

// WriteProblem writes doc, a problem document whose members the surface
// defines (type, title, status and detail at least), with its status and
// media type. retryAfterMS > 0 also sets Retry-After, in whole seconds
// rounded up.
func WriteProblem(w http.ResponseWriter, status int, retryAfterMS int64, doc any) {
	w.Header().Set("Content-Type", ContentTypeProblem)
	if retryAfterMS > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt((retryAfterMS+999)/1000, 10))
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(doc)
}

// WriteJSON writes v as an application/json 200 answer.
func WriteJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
