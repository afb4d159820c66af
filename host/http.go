package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"

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

// strictString is a JSON string field decoded without encoding/json's
// silent repairs: a string holding invalid UTF-8 or an unpaired surrogate
// escape (\ud800) is refused, where json.Unmarshal would turn either into
// U+FFFD — and the key a client sent would not be the key applied.
type strictString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *strictString) UnmarshalJSON(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("a string that is not valid UTF-8")
	}
	if unpairedSurrogate(b) {
		return errors.New("a string with an unpaired surrogate escape")
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = strictString(v)
	return nil
}

// unpairedSurrogate reports whether the JSON text b holds a \uD800–\uDFFF
// escape that is not a high surrogate followed at once by a low one.
func unpairedSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			continue
		}
		if b[i+1] != 'u' {
			i++ // an escaped character: skip it (it may be a backslash)
			continue
		}
		r, ok := hex4(b, i+2)
		switch {
		case !ok:
			return true // not JSON; the decoder refuses it too
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		case r >= 0xd800 && r <= 0xdbff:
			if i+11 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
				return true
			}
			lo, ok := hex4(b, i+8)
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// hex4 reads the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		return &journal.InputError{Field: "body", Problem: fmt.Sprintf("unreadable or over %d bytes: %v", maxRequestBytes, err)}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &journal.InputError{Field: "body", Problem: err.Error()}
	}
	if dec.More() {
		return &journal.InputError{Field: "body", Problem: "trailing data after the JSON object"}
	}
	return nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
