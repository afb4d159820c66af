package server

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// The effect ledger over HTTP (SPEC §3): begin (gate, then the intent if
// absent), the runner's own side effect, commit; resolve after an
// uncertain report. Every call is fenced by the run in the store.

// effectBegin is POST /v1/runs/{id}/effects/begin. In order:
//  1. the declared maximum duration must fit the lease (invalid
//     otherwise, nothing written);
//  2. the gate: the runway this server vouches for must cover it plus the
//     margin, else one synchronous renewal is tried, and still short the
//     call is refused (lease-runway) with nothing written;
//  3. the ledger: committed → the stored result (do not invoke); an intent
//     without a commit → the uncertain problem (reconcile, then resolve);
//     otherwise the intent is recorded under this fence → started: invoke
//     once, with the idempotency key and the fence, before the deadline
//     runway_ms gives, then commit.
func (s *Server) effectBegin(w http.ResponseWriter, r *http.Request) {
	id, req, ok := idAndBody[effectBeginRequest](s, w, r)
	if !ok {
		return
	}
	maxDur := msDuration(req.MaxDurationMS)
	if err := s.cfg.Timing.CheckEffect(maxDur); err != nil {
		s.problem(w, r, err)
		return
	}
	ref := driver.RunLeaseRef{ID: id, Fence: req.Fence}
	if err := s.gate(r, ref, string(req.Owner), maxDur); err != nil {
		s.problem(w, r, err)
		return
	}
	e, err := s.d.RunEffectBegin(r.Context(), &driver.RunEffectParams{RunID: id, Fence: req.Fence, Key: string(req.Key)})
	if err != nil {
		s.forgetIfRefused(ref, err)
		s.problem(w, r, err)
		return
	}
	if e.Outcome == driver.EffectUncertain {
		s.problem(w, r, &runs.UncertainEffectError{RunID: id, Key: e.Key, IntentFence: e.Fence})
		return
	}
	writeJSON(w, effectBeginResponse{Outcome: string(e.Outcome), Effect: effectOf(e),
		IdempotencyKey: strconv.FormatInt(id, 10) + ":" + e.Key, RunwayMS: ms(s.book.available(ref))})
}

// gate is the side-effect gate for a remote holder (SPEC §2), on the
// server's knowledge of the lease: no store call when it passes.
func (s *Server) gate(r *http.Request, ref driver.RunLeaseRef, owner string, maxDur time.Duration) error {
	needed := maxDur + s.cfg.Timing.Margin
	if s.book.available(ref) >= needed {
		return nil
	}
	if _, _, err := s.renewNow(r, ref.ID, ref.Fence, owner); err != nil {
		return fmt.Errorf("effect gate: renewing before the effect: %w", err)
	}
	if avail := s.book.available(ref); avail < needed {
		return &leasehold.RunwayError{Ref: lease.Ref(ref), Needed: needed, Available: avail}
	}
	return nil
}

// effectCommit is POST /v1/runs/{id}/effects/commit: the result of an
// effect this fence started. A fenced-out commit is refused and its result
// discarded; the intent stays, uncertain to the next holder.
func (s *Server) effectCommit(w http.ResponseWriter, r *http.Request) {
	id, req, ok := idAndBody[effectCommitRequest](s, w, r)
	if !ok {
		return
	}
	e, err := s.d.RunEffectCommit(r.Context(), &driver.RunEffectCommitParams{RunID: id, Fence: req.Fence, Key: string(req.Key), Result: req.Result})
	if err != nil {
		s.forgetIfRefused(driver.RunLeaseRef{ID: id, Fence: req.Fence}, err)
		s.problem(w, r, err)
		return
	}
	writeJSON(w, effectResponse{Effect: effectOf(e), RunwayMS: ms(s.book.runway(driver.RunLeaseRef{ID: id, Fence: req.Fence}))})
}

// effectResolve is POST /v1/runs/{id}/effects/resolve: an uncertain effect
// reconciled — happened records it committed with result; otherwise the
// intent is removed and the next begin starts it afresh.
func (s *Server) effectResolve(w http.ResponseWriter, r *http.Request) {
	id, req, ok := idAndBody[effectResolveRequest](s, w, r)
	if !ok {
		return
	}
	e, err := s.d.RunEffectResolve(r.Context(), &driver.RunEffectResolveParams{RunID: id, Fence: req.Fence, Key: string(req.Key),
		Committed: req.Happened, Result: req.Result})
	if err != nil {
		s.forgetIfRefused(driver.RunLeaseRef{ID: id, Fence: req.Fence}, err)
		s.problem(w, r, err)
		return
	}
	writeJSON(w, effectResponse{Effect: effectOf(e), RunwayMS: ms(s.book.runway(driver.RunLeaseRef{ID: id, Fence: req.Fence}))})
}

// effects is GET /v1/runs/{id}/effects: the run's ledger, by key.
func (s *Server) effects(w http.ResponseWriter, r *http.Request) {
	id, err := runID(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if _, err := s.c.Run(r.Context(), id); err != nil {
		s.problem(w, r, err) // not-found for a run that does not exist, not an empty ledger
		return
	}
	es, err := s.d.RunEffectList(r.Context(), &driver.RunEffectListParams{RunID: id})
	if err != nil {
		s.problem(w, r, err)
		return
	}
	out := effectsResponse{Effects: make([]effectBody, len(es))}
	for i, e := range es {
		out.Effects[i] = effectOf(e)
	}
	writeJSON(w, out)
}
