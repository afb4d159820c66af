package host

import (
	"encoding/json"
	"net/http"

	"github.com/leasehold/leasehold/internal/httpapi"
	"github.com/leasehold/leasehold/journal"
)

// maxRequestBytes bounds one request body: a command's payload may be up
// to journal.MaxPayloadRawBytes before compaction, plus its key and the
// envelope.
const maxRequestBytes = journal.MaxPayloadRawBytes + 4096

// commandRequest is the body of POST /v1/worlds/{world}/commands.
type commandRequest struct {
	Key     strictString    `json:"key"`
	Payload json.RawMessage `json:"payload"`
}

// replyBody is the answer to a command.
type replyBody struct {
	Position  int64           `json:"position"`
	Payload   json.RawMessage `json:"payload,omitempty"`
	Duplicate bool            `json:"duplicate,omitempty"`
}

type handoffRequest struct {
	To strictString `json:"to"`
}

// strictString is the shared strict JSON string (internal/httpapi): invalid
// UTF-8 and unpaired surrogate escapes are refused, never repaired.
type strictString = httpapi.StrictString

type statusBody struct {
	Node    string   `json:"node"`
	Program string   `json:"program"`
	Held    []string `json:"held"`
	Stats   Stats    `json:"stats"`
}

// Handler serves a host's HTTP API: what another process needs to submit
// commands to the worlds held here and to move worlds between hosts.
//
//	POST /v1/worlds/{world}/commands  {"key","payload"} → {"position","payload","duplicate"}
//	POST /v1/worlds/{world}/create    create the world homed here and hold it
//	POST /v1/worlds/{world}/prepare   first look and mirror warm-up (before a handoff to here)
//	POST /v1/worlds/{world}/acquire   hold a world the store delivered here
//	POST /v1/worlds/{world}/handoff   {"to"} hand the world to another node
//	GET  /v1/status                   {"node","program","held","stats"}
//
// Errors are RFC 9457 problem documents (Problem). Bodies are decoded
// strictly: unknown fields and trailing data are refused, and a body over
// maxRequestBytes is refused unread.
func Handler(h *Host) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/worlds/{world}/commands", func(w http.ResponseWriter, r *http.Request) {
		var req commandRequest
		if err := decodeBody(w, r, &req); err != nil {
			writeProblem(w, err)
			return
		}
		rep, err := h.Submit(r.Context(), r.PathValue("world"), Command{Key: string(req.Key), Payload: req.Payload})
		if err != nil {
			writeProblem(w, err)
			return
		}
		writeJSON(w, replyBody{Position: rep.Position, Payload: rep.Payload, Duplicate: rep.Duplicate})
	})
	simple := func(op func(*http.Request, string) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if err := op(r, r.PathValue("world")); err != nil {
				writeProblem(w, err)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}
	}
	mux.HandleFunc("POST /v1/worlds/{world}/create", simple(func(r *http.Request, wd string) error { return h.Create(r.Context(), wd) }))
	mux.HandleFunc("POST /v1/worlds/{world}/prepare", simple(func(r *http.Request, wd string) error { return h.Prepare(r.Context(), wd) }))
	mux.HandleFunc("POST /v1/worlds/{world}/acquire", simple(func(r *http.Request, wd string) error { return h.Acquire(r.Context(), wd) }))
	mux.HandleFunc("POST /v1/worlds/{world}/handoff", func(w http.ResponseWriter, r *http.Request) {
		var req handoffRequest
		if err := decodeBody(w, r, &req); err != nil {
			writeProblem(w, err)
			return
		}
		if err := h.Handoff(r.Context(), r.PathValue("world"), string(req.To)); err != nil {
			writeProblem(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, statusBody{Node: h.Node(), Program: h.cfg.Program.Name(), Held: h.Held(), Stats: h.Stats()})
	})
	return mux
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	return httpapi.Decode(w, r, maxRequestBytes, v)
}

func writeJSON(w http.ResponseWriter, v any) { httpapi.WriteJSON(w, v) }
