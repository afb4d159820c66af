package server

import (
	"net/http"
	"strconv"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/journal"
)

// The read-only endpoints the dashboard (package dashboard) reads besides
// the run and world endpoints: who the token is, the run counts, the
// leases this server vouches for, the world list and a world's audit.
// Each answers only what the token may read.

// maxLeasesShown bounds GET /v1/leases; total says how many there are.
const maxLeasesShown = 500

// whoami is GET /v1/whoami?queue=&world=: the token's id and scopes, and
// what it may do on the queue or world named (on every queue when neither
// is) — so the dashboard shows only the controls the API would accept.
func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r.Context())
	if p == nil {
		s.problem(w, r, auth.ErrUnauthorized)
		return
	}
	q := r.URL.Query()
	kind, name := auth.Queue, q.Get("queue")
	if world := q.Get("world"); world != "" {
		kind, name = auth.World, world
	}
	out := whoamiResponse{TokenID: p.id, Scopes: make([]string, len(p.scopes))}
	for i, sc := range p.scopes {
		out.Scopes[i] = sc.String()
	}
	out.May.Read = p.scopes.Allows(auth.Read, kind, name)
	out.May.Work = p.scopes.Allows(auth.Work, kind, name)
	out.May.Admin = p.scopes.Allows(auth.Admin, kind, name)
	writeJSON(w, out)
}

// runStats is GET /v1/stats/runs: the run counts by queue and state, of
// the queues the token may read, as read at as_of — at most
// Config.StatsCacheTTL ago (dashboard_counts.go).
func (s *Server) runStats(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r.Context())
	if p == nil {
		s.problem(w, r, auth.ErrUnauthorized)
		return
	}
	cs, asOf, err := s.runCounts(r.Context())
	if err != nil {
		s.problem(w, r, err)
		return
	}
	out := runStatsResponse{Counts: []runCountBody{}, AsOf: stamp(asOf)}
	for _, c := range cs {
		if p.scopes.Allows(auth.Read, auth.Queue, c.Queue) {
			out.Counts = append(out.Counts, runCountBody{Queue: c.Queue, State: string(c.State), N: c.N})
		}
	}
	writeJSON(w, out)
}

// leases is GET /v1/leases: the run leases this server vouches for — the
// claims and renewals confirmed through it — with the runway and the
// gate's available time it would answer now, and the timing they are
// measured against. The book does not know a lease's queue, so only a
// token that may read every queue may look.
func (s *Server) leases(w http.ResponseWriter, r *http.Request) {
	if err := allow(r, auth.Read, auth.Queue, ""); err != nil {
		s.problem(w, r, err)
		return
	}
	es, total := s.book.snapshot(maxLeasesShown)
	t := s.cfg.Timing
	out := leasesResponse{Total: total, Leases: make([]leaseBody, len(es)),
		Timing: timingBody{LeaseMS: ms(t.Lease), SkewMS: ms(t.Skew), StopMS: ms(t.Stop), DrainMS: ms(t.Drain),
			RenewMS: ms(t.Renew), MaxRunwayMS: ms(t.Lease - t.Skew)}}
	for i, e := range es {
		out.Leases[i] = leaseBody{RunID: e.ref.ID, Fence: e.ref.Fence, Owner: e.owner,
			RunwayMS: ms(s.book.runway(e.ref)), AvailableMS: ms(s.book.available(e.ref)), LagMS: ms(e.lag)}
	}
	writeJSON(w, out)
}

// listWorlds is GET /v1/worlds?after=&limit=: the worlds by id after the
// cursor, those of the page the token may read. next is the cursor of the
// following page (absent on the last), whether or not this page showed
// anything.
func (s *Server) listWorlds(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r.Context())
	q := r.URL.Query()
	var limit int64
	err := queryInt(q.Get("limit"), "limit", &limit)
	if err == nil && (limit < 0 || limit > maxJournalPage) {
		err = &journal.InputError{Field: "limit", Problem: "limit is 1 to " + strconv.Itoa(maxJournalPage)}
	}
	if err == nil && p == nil {
		err = auth.ErrUnauthorized
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	limit = cmpOr(limit, defaultListLimit)
	ws, err := s.c.Worlds(r.Context(), q.Get("after"), int(limit))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	out := worldsPage{Worlds: []worldBody{}}
	for _, wd := range ws {
		if p.scopes.Allows(auth.Read, auth.World, wd.World) {
			out.Worlds = append(out.Worlds, worldOf(wd))
		}
	}
	if int64(len(ws)) == limit {
		out.Next = ws[len(ws)-1].World
	}
	writeJSON(w, out)
}

// auditWorld is GET /v1/worlds/{world}/audit: the world's journal replayed
// and verified (leasehold.Client.Audit) — who held every position, as
// spans of one epoch and holder, and the first violation if any.
func (s *Server) auditWorld(w http.ResponseWriter, r *http.Request) {
	world := r.PathValue("world")
	if err := journal.ValidateID("world", world); err != nil {
		s.problem(w, r, err)
		return
	}
	rep, err := s.c.Audit(r.Context(), world)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, auditOf(rep))
}

func auditOf(rep leasehold.AuditReport) auditResponse {
	out := auditResponse{World: rep.World, Entries: rep.Entries, OK: rep.OK(), Spans: make([]spanBody, len(rep.Spans)),
		Signatures: rep.Signatures, Signed: rep.Signed}
	for i, sp := range rep.Spans {
		out.Spans[i] = spanBody{Epoch: sp.Epoch, Holder: sp.Holder, From: sp.From, To: sp.To}
	}
	if v := rep.Violation; v != nil {
		out.Violation = &violationBody{Position: v.Position, Rule: v.Rule, Detail: v.Detail}
	}
	return out
}
