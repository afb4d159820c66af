package server

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// The world endpoints: the root API's world primitives (Client.CreateWorld,
// Grant, Renew, Handoff, Revoke, the driver's JournalAppend with signed
// batches, Read) over HTTP, and a command submitted to the world host
// attached to this server (Config.Host). Every mutating call carries the
// epoch; the store's lease rules decide, and a refusal is the problem of
// its reason (fenced for a stale or revoked epoch) naming the lease in
// force.

// maxAppendBatch bounds one append request's entries.
const maxAppendBatch = 1000

// maxJournalPage bounds one journal read.
const maxJournalPage = 1000

// worldAndBody reads {world} and a strict JSON body into a new T.
func worldAndBody[T any](s *Server, w http.ResponseWriter, r *http.Request) (world string, req T, ok bool) {
	world = r.PathValue("world")
	err := journal.ValidateID("world", world)
	if err == nil {
		err = s.decode(w, r, &req)
	}
	if err != nil {
		s.problem(w, r, err)
		return "", req, false
	}
	return world, req, true
}

// answerWorld answers a lease change: the head, with the runway measured
// from sent when the change left a holder.
func (s *Server) answerWorld(w http.ResponseWriter, r *http.Request, wd *driver.World, err error, sent time.Time) {
	if err != nil {
		s.problem(w, r, err)
		return
	}
	b := worldOf(wd)
	if wd.Holder != "" && !sent.IsZero() {
		// The store set expires_at = its now + term, its now being after
		// sent: term less what has passed since sent is a floor.
		b.RunwayMS = max(0, (wd.Term - s.cfg.Clock.Since(sent)).Milliseconds())
	}
	writeJSON(w, worldResponse{World: b})
}

// createWorld is POST /v1/worlds {"world","home"}: 201, epoch 1 granted
// to home.
func (s *Server) createWorld(w http.ResponseWriter, r *http.Request) {
	var req worldCreateRequest
	if err := s.decode(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	if err := allow(r, auth.Admin, auth.World, string(req.World)); err != nil {
		s.problem(w, r, err)
		return
	}
	wd, err := s.c.CreateWorld(r.Context(), string(req.World), string(req.Home))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSONStatus(w, http.StatusCreated, worldResponse{World: worldOf(wd)})
}

// getWorld is GET /v1/worlds/{world}.
func (s *Server) getWorld(w http.ResponseWriter, r *http.Request) {
	world := r.PathValue("world")
	if err := journal.ValidateID("world", world); err != nil {
		s.problem(w, r, err)
		return
	}
	wd, err := s.c.World(r.Context(), world)
	s.answerWorld(w, r, wd, err, time.Time{})
}

// grantWorld is POST /v1/worlds/{world}/grant {"holder","epoch"}.
func (s *Server) grantWorld(w http.ResponseWriter, r *http.Request) {
	world, req, ok := worldAndBody[worldGrantRequest](s, w, r)
	if !ok {
		return
	}
	sent := s.cfg.Clock.Now()
	wd, err := s.c.Grant(r.Context(), world, string(req.Holder), req.Epoch)
	s.answerWorld(w, r, wd, err, sent)
}

// renewWorld is POST /v1/worlds/{world}/renew {"holder","epoch"}.
func (s *Server) renewWorld(w http.ResponseWriter, r *http.Request) {
	world, req, ok := worldAndBody[worldRenewRequest](s, w, r)
	if !ok {
		return
	}
	sent := s.cfg.Clock.Now()
	wd, err := s.c.Renew(r.Context(), world, string(req.Holder), req.Epoch)
	s.answerWorld(w, r, wd, err, sent)
}

// handoffWorld is POST /v1/worlds/{world}/handoff {"from","to","epoch"}.
func (s *Server) handoffWorld(w http.ResponseWriter, r *http.Request) {
	world, req, ok := worldAndBody[worldHandoffRequest](s, w, r)
	if !ok {
		return
	}
	sent := s.cfg.Clock.Now()
	wd, err := s.c.Handoff(r.Context(), world, string(req.From), string(req.To), req.Epoch)
	s.answerWorld(w, r, wd, err, sent)
}

// revokeWorld is POST /v1/worlds/{world}/revoke {"epoch","reason"}.
func (s *Server) revokeWorld(w http.ResponseWriter, r *http.Request) {
	world, req, ok := worldAndBody[worldRevokeRequest](s, w, r)
	if !ok {
		return
	}
	wd, err := s.c.Revoke(r.Context(), world, req.Epoch, string(req.Reason))
	s.answerWorld(w, r, wd, err, time.Time{})
}

// appendWorld is POST /v1/worlds/{world}/append: the batch in one
// transaction under the append rule. Every entry is checked before any is
// sent, so a batch is refused whole for bad input; the lease rule judges
// every entry of one holder, epoch and seen position alike, so a refusal
// refuses them all (a refusal for epoch, holder or expiry is journaled as
// append.rejected, once per holder per epoch — SPEC §4).
func (s *Server) appendWorld(w http.ResponseWriter, r *http.Request) {
	world, req, ok := worldAndBody[appendRequest](s, w, r)
	if !ok {
		return
	}
	reqs, err := req.requests()
	if err != nil {
		s.problem(w, r, err)
		return
	}
	outs, err := s.d.JournalAppend(r.Context(), &driver.JournalAppendParams{World: world, Requests: reqs})
	if err != nil {
		s.problem(w, r, err)
		return
	}
	resp := appendResponse{Positions: make([]int64, len(outs))}
	for i, o := range outs {
		if o.Err != nil {
			s.problem(w, r, o.Err)
			return
		}
		resp.Positions[i] = o.Position
	}
	writeJSON(w, resp)
}

// requests turns the body into the driver's requests, each checked.
func (req *appendRequest) requests() ([]journal.AppendRequest, error) {
	if n := len(req.Entries); n == 0 || n > maxAppendBatch {
		return nil, &journal.InputError{Field: "entries", Problem: fmt.Sprintf("%d entries: a batch holds 1 to %d", n, maxAppendBatch)}
	}
	signed := len(req.Signature) > 0
	if !signed && req.Position != 0 {
		return nil, &journal.InputError{Field: "position", Problem: "only a signed batch names its position"}
	}
	out := make([]journal.AppendRequest, len(req.Entries))
	for i, e := range req.Entries {
		out[i] = journal.AppendRequest{Holder: string(req.Holder), Epoch: req.Epoch, SeenPosition: req.SeenPosition,
			Kind: journal.Kind(e.Kind), Key: string(e.Key), Payload: e.Payload}
		if signed {
			out[i].Position = req.Position + int64(i)
		}
		c := out[i] // ValidateAppend normalizes its argument; the driver does that again
		if err := journal.ValidateAppend(&c); err != nil {
			return nil, fmt.Errorf("entries[%d]: %w", i, err)
		}
	}
	if signed {
		out[len(out)-1].Signature = req.Signature
		if err := journal.ValidateSignedBatch(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readJournal is GET /v1/worlds/{world}/journal?from=&limit=: entries from
// position from (default 1), at most limit (default and cap 1000). next
// is the from of the following page.
func (s *Server) readJournal(w http.ResponseWriter, r *http.Request) {
	world := r.PathValue("world")
	q := r.URL.Query()
	var from, limit int64
	err := journal.ValidateID("world", world)
	if err == nil {
		err = queryInt(q.Get("from"), "from", &from)
	}
	if err == nil {
		err = queryInt(q.Get("limit"), "limit", &limit)
	}
	if err == nil && (from < 0 || limit < 0 || limit > maxJournalPage) {
		err = &journal.InputError{Field: "limit", Problem: fmt.Sprintf("from >= 1 and limit 1 to %d", maxJournalPage)}
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	from, limit = max(from, 1), cmpOr(limit, maxJournalPage)
	es, err := s.c.Read(r.Context(), world, from, int(limit))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	page := journalPage{Entries: make([]entryBody, len(es))}
	for i := range es {
		page.Entries[i] = entryOf(&es[i])
	}
	if int64(len(es)) == limit {
		page.Next = strconv.FormatInt(es[len(es)-1].Position+1, 10)
	}
	writeJSON(w, page)
}

func cmpOr(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

// submitCommand is POST /v1/worlds/{world}/commands {"key","payload"}:
// the command goes to the world host attached to this server
// (Config.Host) through the host's own handler (host.Handler), so it is
// decoded, run on the world's turn and refused exactly as the host's API
// does (not-holder names the holder to go to; overloaded carries its
// delay). With no host attached it is the unavailable problem: `leasehold
// serve` attaches none; a program that embeds a host and a server does.
func (s *Server) submitCommand(w http.ResponseWriter, r *http.Request) {
	if err := journal.ValidateID("world", r.PathValue("world")); err != nil {
		s.problem(w, r, err)
		return
	}
	if s.hostAPI == nil {
		s.problem(w, r, fmt.Errorf("no world host is attached to this server (server.Config.Host): submit to the world's host: %w", leasehold.ErrUnavailable))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes) // this server's cap first, then the host's
	s.hostAPI.ServeHTTP(w, r)
}
