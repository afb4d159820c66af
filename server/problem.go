package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/internal/httpapi"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// Problem is an RFC 9457 problem document: how the server answers every
// error. Type is one stable URI per sentinel a caller matches; the other
// members carry what the typed error carries (the fence in force, the
// uncertain intent's fence, the runway the gate needed), so a client in
// another language can act on it without parsing Detail.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Field is the input refused (invalid).
	Field string `json:"field,omitempty"`
	// RunID, Fence (the fence the call carried), CurrentFence and State
	// describe a fenced-out or lost lease.
	RunID        int64  `json:"run_id,omitempty"`
	Fence        int64  `json:"fence,omitempty"`
	CurrentFence int64  `json:"current_fence,omitempty"`
	State        string `json:"state,omitempty"`
	// Key and IntentFence name an uncertain effect.
	Key         string `json:"key,omitempty"`
	IntentFence int64  `json:"intent_fence,omitempty"`
	// NeededMS and AvailableMS are the gate's figures (runway).
	NeededMS    int64 `json:"needed_ms,omitempty"`
	AvailableMS int64 `json:"available_ms,omitempty"`
	// Queue and KnownQueues name an unknown queue.
	Queue       string   `json:"queue,omitempty"`
	KnownQueues []string `json:"known_queues,omitempty"`
	// Limit is the cap a too-large body broke, in bytes.
	Limit int64 `json:"limit,omitempty"`
	// Action and Resource say what a forbidden token may not do
	// ("work", "queue emails").
	Action   string `json:"action,omitempty"`
	Resource string `json:"resource,omitempty"`
	// RetryAfterMS is when a rate-limited call may be retried (also the
	// Retry-After header, in whole seconds rounded up).
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
	// World, Epoch (the epoch the call carried), CurrentEpoch,
	// CurrentHolder and Reason (journal.Reason) describe a refused world
	// write: a fenced one names the lease in force.
	World         string `json:"world,omitempty"`
	Epoch         int64  `json:"epoch,omitempty"`
	CurrentEpoch  int64  `json:"current_epoch,omitempty"`
	CurrentHolder string `json:"current_holder,omitempty"`
	Reason        string `json:"reason,omitempty"`
}

func (p *Problem) Error() string { return fmt.Sprintf("%s (%d): %s", p.Title, p.Status, p.Detail) }

// The problem types: one URI per sentinel. They are part of the API's
// contract (openapi.json lists them) and never change meaning.
const (
	ProblemFenced       = httpapi.ProblemBase + "fenced"       // ErrFenced: the fence is not current; nothing changed
	ProblemLeaseLost    = httpapi.ProblemBase + "lease-lost"   // ErrLeaseLost, ErrLeaseExpired: the lease expired on the store clock or is held by another owner
	ProblemRunway       = httpapi.ProblemBase + "lease-runway" // ErrLeaseRunway: the gate refused; the effect was not started
	ProblemUncertain    = httpapi.ProblemBase + "uncertain"    // ErrUncertain: an intent without a commit; reconcile, then resolve
	ProblemUnknownQueue = httpapi.ProblemBase + "unknown-queue"
	ProblemInvalid      = httpapi.ProblemInvalid
	ProblemTooLarge     = httpapi.ProblemTooLarge
	ProblemNotFound     = httpapi.ProblemNotFound
	ProblemConflict     = httpapi.ProblemConflict
	ProblemClosed       = httpapi.ProblemClosed
	ProblemUnavailable  = httpapi.ProblemBase + "unavailable"
	ProblemNotMigrated  = httpapi.ProblemBase + "not-migrated"
	ProblemInternal     = httpapi.ProblemInternal
	ProblemMethod       = httpapi.ProblemBase + "method-not-allowed"

	// Auth (auth.go, ratelimit.go).
	ProblemUnauthorized = httpapi.ProblemBase + "unauthorized" // auth.ErrUnauthorized: no token, or one unknown or revoked (401)
	ProblemForbidden    = httpapi.ProblemBase + "forbidden"    // auth.ErrForbidden: the token's scopes do not allow the call (403)
	ProblemRateLimited  = httpapi.ProblemBase + "rate-limited" // the token is over Config.RateLimit; retry after retry_after_ms (429)

	// Worlds (worlds*.go): the lease rules' refusals beside fenced and
	// lease-lost (journal.Reason → sentinel).
	ProblemNotHolder    = httpapi.ProblemBase + "not-holder"    // ErrNotHolder: the epoch is current, its holder is another
	ProblemSeenBehind   = httpapi.ProblemBase + "seen-behind"   // ErrSeenBehind: replay through the grant first
	ProblemLeaseHeld    = httpapi.ProblemBase + "lease-held"    // ErrLeaseHeld: revoke before granting
	ProblemBadSignature = httpapi.ProblemBase + "bad-signature" // ErrBadSignature: the batch does not verify under the epoch's key

	// A submitted command's refusals, as the attached world host answers
	// them (package host; not-holder, uncertain and lease-runway are
	// shared).
	ProblemOverloaded     = host.ProblemOverloaded
	ProblemKeyReused      = host.ProblemKeyReused
	ProblemUnknownOutcome = host.ProblemUnknownOutcome
	ProblemCommand        = host.ProblemCommand
	ProblemProgram        = host.ProblemProgram
)

// problemOf maps an error to its problem document. The order matters: the
// typed errors first (they carry the members), then the sentinels, the
// narrower before the broader (ErrUnknownQueue and ErrEffectDuration also
// match ErrInvalid).
func problemOf(err error) *Problem {
	p := &Problem{Detail: err.Error()}
	var (
		tl  *httpapi.TooLargeError
		fe  *driver.RunFencedError
		ue  *runs.UncertainEffectError
		rw  *leasehold.RunwayError
		uq  *leasehold.UnknownQueueError
		in  *journal.InputError
		fb  *auth.ForbiddenError
		rl  *RateLimitedError
		rf  *journal.RefusedError
		lim = func(t, title string, status int) { p.Type, p.Title, p.Status = t, title, status }
	)
	switch {
	case errors.Is(err, auth.ErrUnauthorized):
		lim(ProblemUnauthorized, "unauthorized", http.StatusUnauthorized)
	case errors.As(err, &fb):
		lim(ProblemForbidden, "forbidden", http.StatusForbidden)
		p.Action, p.Resource = string(fb.Action), strings.TrimSpace(string(fb.Kind)+" "+fb.Name)
	case errors.Is(err, auth.ErrForbidden):
		lim(ProblemForbidden, "forbidden", http.StatusForbidden)
	case errors.As(err, &rl):
		lim(ProblemRateLimited, "rate limited", http.StatusTooManyRequests)
		p.RetryAfterMS = max(1, rl.RetryAfter.Milliseconds())
	case errors.As(err, &rf):
		worldRefusal(p, rf)
	case errors.Is(err, leasehold.ErrNotHolder):
		lim(ProblemNotHolder, "not the holder", http.StatusConflict)
	case errors.Is(err, leasehold.ErrSeenBehind):
		lim(ProblemSeenBehind, "seen position behind the grant", http.StatusConflict)
	case errors.Is(err, leasehold.ErrLeaseHeld):
		lim(ProblemLeaseHeld, "lease held", http.StatusConflict)
	case errors.Is(err, lease.ErrBadSignature):
		lim(ProblemBadSignature, "bad signature", http.StatusConflict)
	case errors.As(err, &tl):
		lim(ProblemTooLarge, "request body too large", http.StatusRequestEntityTooLarge)
		p.Limit = tl.Limit
	case errors.As(err, &uq):
		lim(ProblemUnknownQueue, "unknown queue", http.StatusBadRequest)
		p.Queue, p.KnownQueues = uq.Queue, uq.Known
	case errors.As(err, &ue):
		lim(ProblemUncertain, "effect uncertain", http.StatusConflict)
		p.RunID, p.Key, p.IntentFence = ue.RunID, ue.Key, ue.IntentFence
	case errors.As(err, &rw):
		lim(ProblemRunway, "lease runway too short", http.StatusConflict)
		p.NeededMS, p.AvailableMS = rw.Needed.Milliseconds(), rw.Available.Milliseconds()
	case errors.As(err, &fe):
		if errors.Is(err, leasehold.ErrLeaseExpired) || fe.OwnerMismatch {
			lim(ProblemLeaseLost, "lease lost", http.StatusConflict)
		} else {
			lim(ProblemFenced, "fenced", http.StatusConflict)
		}
		p.RunID, p.Fence, p.CurrentFence, p.State = fe.ID, fe.Fence, fe.CurrentFence, string(fe.State)
	case errors.Is(err, leasehold.ErrFenced):
		lim(ProblemFenced, "fenced", http.StatusConflict)
	case errors.Is(err, leasehold.ErrLeaseExpired), errors.Is(err, leasehold.ErrLeaseLost):
		lim(ProblemLeaseLost, "lease lost", http.StatusConflict)
	case errors.Is(err, leasehold.ErrLeaseRunway):
		lim(ProblemRunway, "lease runway too short", http.StatusConflict)
	case errors.Is(err, leasehold.ErrUncertain):
		lim(ProblemUncertain, "effect uncertain", http.StatusConflict)
	case errors.Is(err, leasehold.ErrInvalid):
		lim(ProblemInvalid, "invalid", http.StatusBadRequest)
		if errors.As(err, &in) {
			p.Field = in.Field
		}
	case errors.Is(err, leasehold.ErrNotFound):
		lim(ProblemNotFound, "not found", http.StatusNotFound)
	case errors.Is(err, leasehold.ErrConflict):
		lim(ProblemConflict, "conflict", http.StatusConflict)
	case errors.Is(err, leasehold.ErrClosed):
		lim(ProblemClosed, "closed", http.StatusServiceUnavailable)
	case errors.Is(err, leasehold.ErrNotMigrated), errors.Is(err, leasehold.ErrSchemaTooNew):
		lim(ProblemNotMigrated, "store schema not current", http.StatusServiceUnavailable)
	case errors.Is(err, leasehold.ErrUnavailable):
		lim(ProblemUnavailable, "unavailable", http.StatusServiceUnavailable)
	default:
		// A store error that is none of the above (a lost connection, a
		// timeout): the outcome of a write may be unknown, so the caller
		// retries with the same fence, unique key or effect key.
		lim(ProblemInternal, "internal", http.StatusInternalServerError)
	}
	return p
}

// problem answers err as its problem document. A 5xx is logged with the
// error: it is the server's or the store's trouble, not the caller's, and
// the problem's detail is all the caller sees of it.
func (s *Server) problem(w http.ResponseWriter, r *http.Request, err error) {
	p := problemOf(err)
	if p.Status >= http.StatusInternalServerError {
		s.cfg.Logger.Error("api call failed", "method", r.Method, "path", r.URL.Path, "type", p.Type, "err", err)
	}
	s.countAuthRefusal(p)
	if p.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="leasehold"`) // RFC 6750 §3
	}
	httpapi.WriteProblem(w, p.Status, p.RetryAfterMS, p)
}

// worldRefusal fills p from a lease rule's refusal of a world write: the
// type is the reason's sentinel's, and the members name the lease in
// force, so a fenced-out holder learns the epoch and holder that replaced
// it.
func worldRefusal(p *Problem, rf *journal.RefusedError) {
	inner := problemOf(rf.Reason.Sentinel())
	p.Type, p.Title, p.Status = inner.Type, inner.Title, inner.Status
	p.World, p.Epoch, p.CurrentEpoch, p.CurrentHolder, p.Reason = rf.World, rf.Epoch, rf.CurrentEpoch, rf.CurrentHolder, string(rf.Reason)
}
