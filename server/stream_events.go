package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/journal"
)

// eventsStream is GET /v1/runs/{id}/events/stream: the run's durable
// events as server-sent events, in (fence, seq) order, each with id
// "<fence>:<seq>", the data the eventBody JSON. It resumes after the
// Last-Event-ID header (or the after query parameter) and then follows
// the run: events committed later — by this process, or by any process on
// a Postgres store (LISTEN/NOTIFY) — are sent as they commit. It ends when
// the client leaves or the server stops.
//
// It is the client's Subscribe (internal/scheduler/subscribe.go) over
// HTTP: each read is from the table after the last event sent, so the
// stream and any resumption of it see every durable event once.
func (s *Server) eventsStream(w http.ResponseWriter, r *http.Request) {
	id, err := runID(r)
	var afterFence, afterSeq int64
	if err == nil {
		afterFence, afterSeq, err = parseEventID(lastEventID(r))
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if _, err := s.c.Run(r.Context(), id); err != nil {
		s.problem(w, r, err)
		return
	}
	ctx, cancel := s.streamContext(r)
	defer cancel()
	out, err := startSSE(w)
	if err != nil {
		return
	}
	evs := s.c.Subscribe(ctx, id, leasehold.SubscribeOptions{AfterFence: afterFence, AfterSeq: afterSeq, Poll: s.cfg.StreamPoll})
	keep, keepC := s.cfg.Clock.NewTicker(sseKeepAlive)
	defer keep.Stop()
	for {
		select {
		case e, ok := <-evs:
			if !ok {
				return
			}
			data, err := json.Marshal(eventBody{Fence: e.Fence, Seq: e.Seq, Kind: e.Kind, Payload: raw(e.Payload), CreatedAt: stamp(e.CreatedAt)})
			if err == nil {
				err = out.event(fmt.Sprintf("%d:%d", e.Fence, e.Seq), "", data)
			}
			if err != nil {
				return // the client left: Subscribe ends with ctx
			}
		case <-keepC:
			if out.comment("keep-alive") != nil {
				return
			}
		}
	}
}

// parseEventID reads a run event stream id, "<fence>:<seq>"; "" is the
// start of the stream.
func parseEventID(v string) (fence, seq int64, err error) {
	if v == "" {
		return 0, 0, nil
	}
	f, q, ok := strings.Cut(v, ":")
	if ok {
		fence, err = strconv.ParseInt(f, 10, 64)
	}
	if ok && err == nil {
		seq, err = strconv.ParseInt(q, 10, 64)
	}
	if !ok || err != nil || fence < 0 || seq < 0 {
		return 0, 0, &journal.InputError{Field: "Last-Event-ID", Problem: fmt.Sprintf("%.40q is not an event id <fence>:<seq>", v)}
	}
	return fence, seq, nil
}
