package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"
)

// Server-sent events (text/event-stream, WHATWG HTML §9.2): the run event
// and journal streams write through sse. Every event carries an id: the
// position it stands at in its stream. A client that lost the connection
// sends the last id it saw as Last-Event-ID (EventSource does so on its
// own) and the stream resumes right after it — the stream is read from
// the table, the source of truth, so a resumed stream has no gap and no
// duplicate.

// sseKeepAlive is how often an idle stream sends a comment line, so
// proxies and clients see the connection alive.
const sseKeepAlive = 15 * time.Second

type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startSSE answers 200 with the event-stream headers and flushes them: the
// client knows the stream is open before the first event.
func startSSE(w http.ResponseWriter) (*sse, error) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	s := &sse{w: w, rc: http.NewResponseController(w)}
	return s, s.rc.Flush()
}

// event writes one event and flushes it. data must not contain a newline
// (every payload here is compact JSON, which does not).
func (s *sse) event(id, kind string, data []byte) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "id: %s\n", id)
	if kind != "" {
		fmt.Fprintf(&b, "event: %s\n", kind)
	}
	b.WriteString("data: ")
	b.Write(bytes.TrimRight(data, "\n"))
	b.WriteString("\n\n")
	if _, err := s.w.Write(b.Bytes()); err != nil {
		return err
	}
	return s.rc.Flush()
}

// comment writes a comment line (ignored by clients): the keep-alive.
func (s *sse) comment(text string) error {
	if _, err := fmt.Fprintf(s.w, ": %s\n\n", text); err != nil {
		return err
	}
	return s.rc.Flush()
}

// streamContext ends when the client leaves or the server begins to stop,
// so a stream never holds up a graceful shutdown.
func (s *Server) streamContext(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	go func() {
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// lastEventID is the id a client resumes after: the Last-Event-ID header
// (a reconnect) or else the after query parameter (a first connection that
// knows where it stands); "" for the start.
func lastEventID(r *http.Request) string {
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		return v
	}
	return r.URL.Query().Get("after")
}
