package server

import (
	"net/http"
	"strconv"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/runs"
)

// defaultListLimit is a page's size when limit is not given.
const defaultListLimit = 100

// listRuns is GET /v1/runs?queue=&state=&owner=&unique_key=&after=&limit=:
// runs ascending by id after the cursor (owner: the runs it holds now;
// unique_key: the run holding the key now — each read through an index). next is the cursor of the following page (absent
// on the last page): pass it as after. Paging by id never skips or
// repeats a run, however the table changes between pages.
func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var after, limit int64
	err := queryInt(q.Get("after"), "after", &after)
	if err == nil {
		err = queryInt(q.Get("limit"), "limit", &limit)
	}
	if err == nil {
		// Without a queue filter the listing spans every queue, so only
		// a token that may read every queue may ask for it.
		err = allow(r, auth.Read, auth.Queue, q.Get("queue"))
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if limit <= 0 {
		limit = defaultListLimit
	}
	// An absurd limit is refused by the driver's rule (MaxRunListLimit);
	// clamping it to an int first keeps it absurd rather than wrapped.
	rs, err := s.c.Runs(r.Context(), leasehold.RunsFilter{Queue: q.Get("queue"), State: runs.State(q.Get("state")),
		Owner: q.Get("owner"), UniqueKey: q.Get("unique_key"), After: after, Limit: int(min(limit, 1<<31))})
	if err != nil {
		s.problem(w, r, err)
		return
	}
	page := runsPage{Runs: make([]runBody, len(rs))}
	for i, run := range rs {
		page.Runs[i] = runOf(run)
	}
	if int64(len(rs)) == limit {
		page.Next = strconv.FormatInt(rs[len(rs)-1].ID, 10)
	}
	writeJSON(w, page)
}
