package host

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/leasehold/leasehold/internal/httpapi"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// Problem is an RFC 9457 problem document: how a host's HTTP API answers
// an error, with one stable Type per error a caller matches. The world and
// holder fields carry what the typed error carries, so a remote caller
// gets the same *NotHolderError (with the holder to go to),
// *OverloadedError (with its delay) and so on as an in-process one.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	World    string `json:"world,omitempty"`
	Key      string `json:"key,omitempty"`
	Holder   string `json:"holder,omitempty"`
	Epoch    int64  `json:"epoch,omitempty"`
	Position int64  `json:"position,omitempty"`
	Effect   string `json:"effect,omitempty"` // the uncertain effect's key
	// RetryAfterMS is the delay of an overloaded answer (also in the
	// Retry-After header, in whole seconds rounded up).
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
}

// The problem types: a URI per error a caller can match.
const (
	ProblemNotHolder      = "https://leasehold.dev/problems/not-holder"
	ProblemOverloaded     = "https://leasehold.dev/problems/overloaded"
	ProblemKeyReused      = "https://leasehold.dev/problems/key-reused"
	ProblemUnknownOutcome = "https://leasehold.dev/problems/unknown-outcome"
	ProblemCommand        = "https://leasehold.dev/problems/command-refused"
	ProblemInvalid        = httpapi.ProblemInvalid
	ProblemNotFound       = httpapi.ProblemNotFound
	ProblemConflict       = httpapi.ProblemConflict
	ProblemClosed         = httpapi.ProblemClosed
	ProblemProgram        = "https://leasehold.dev/problems/program"
	ProblemUncertain      = httpapi.ProblemBase + "uncertain"
	ProblemRunway         = httpapi.ProblemBase + "lease-runway"
	ProblemInternal       = httpapi.ProblemInternal
)

func (p *Problem) Error() string { return fmt.Sprintf("%s (%d): %s", p.Title, p.Status, p.Detail) }

// problemOf maps an error to its problem document.
func problemOf(err error) *Problem {
	p := &Problem{Detail: err.Error()}
	var (
		nh *NotHolderError
		ov *OverloadedError
		kr *KeyReusedError
		uo *UnknownOutcomeError
		ce *CommandError
		pe *ProgramError
		ue *UncertainEffectError
	)
	switch {
	case errors.As(err, &ue):
		p.Type, p.Title, p.Status, p.World, p.Key, p.Effect, p.Position = ProblemUncertain, "effect uncertain", http.StatusConflict,
			ue.World, ue.Command, ue.Key, ue.Position
	case errors.Is(err, lease.ErrLeaseRunway):
		p.Type, p.Title, p.Status = ProblemRunway, "not enough lease runway", http.StatusServiceUnavailable
	case errors.As(err, &nh):
		p.Type, p.Title, p.Status, p.World, p.Holder, p.Epoch = ProblemNotHolder, "not the holder", http.StatusConflict, nh.World, nh.Holder, nh.Epoch
	case errors.As(err, &ov):
		p.Type, p.Title, p.Status, p.World, p.RetryAfterMS = ProblemOverloaded, "overloaded", http.StatusTooManyRequests, ov.World, max(ov.RetryAfter.Milliseconds(), 1)
	case errors.As(err, &kr):
		p.Type, p.Title, p.Status, p.World, p.Key, p.Position = ProblemKeyReused, "key reused", http.StatusConflict, kr.World, kr.Key, kr.Position
	case errors.As(err, &uo):
		p.Type, p.Title, p.Status, p.World, p.Key = ProblemUnknownOutcome, "outcome unknown", http.StatusServiceUnavailable, uo.World, uo.Key
	case errors.As(err, &pe):
		p.Type, p.Title, p.Status, p.World, p.Position = ProblemProgram, "program", http.StatusUnprocessableEntity, pe.World, pe.Position
	case errors.As(err, &ce):
		p.Type, p.Title, p.Status, p.World, p.Key = ProblemCommand, "command refused", http.StatusUnprocessableEntity, ce.World, ce.Key
	case errors.Is(err, lease.ErrNotFound):
		p.Type, p.Title, p.Status = ProblemNotFound, "not found", http.StatusNotFound
	case errors.Is(err, lease.ErrConflict):
		p.Type, p.Title, p.Status = ProblemConflict, "conflict", http.StatusConflict
	case errors.Is(err, lease.ErrInvalid):
		p.Type, p.Title, p.Status = ProblemInvalid, "invalid", http.StatusBadRequest
	case errors.Is(err, lease.ErrClosed):
		p.Type, p.Title, p.Status = ProblemClosed, "closed", http.StatusServiceUnavailable
	default:
		// A store error on a path that is not a command (prepare,
		// acquire): retryable, nothing was applied.
		p.Type, p.Title, p.Status = ProblemInternal, "internal", http.StatusServiceUnavailable
	}
	return p
}

// errorOf turns a problem document back into the typed error it stands
// for, so a remote host's answers match what an in-process one returns.
func errorOf(p *Problem) error {
	switch p.Type {
	case ProblemNotHolder:
		return &NotHolderError{World: p.World, Holder: p.Holder, Epoch: p.Epoch}
	case ProblemOverloaded:
		return &OverloadedError{World: p.World, RetryAfter: time.Duration(p.RetryAfterMS) * time.Millisecond}
	case ProblemKeyReused:
		return &KeyReusedError{World: p.World, Key: p.Key, Position: p.Position}
	case ProblemUnknownOutcome:
		return &UnknownOutcomeError{World: p.World, Key: p.Key, Err: p}
	case ProblemCommand:
		return &CommandError{World: p.World, Key: p.Key, Err: p}
	case ProblemProgram:
		return &ProgramError{World: p.World, Position: p.Position, Err: fmt.Errorf("%w: %w", p, lease.ErrInvalid)}
	case ProblemNotFound:
		return fmt.Errorf("%w: %w", p, lease.ErrNotFound)
	case ProblemConflict:
		return fmt.Errorf("%w: %w", p, lease.ErrConflict)
	case ProblemInvalid:
		return &journal.InputError{Field: "request", Problem: p.Detail}
	case ProblemClosed:
		return fmt.Errorf("%w: %w", p, lease.ErrClosed)
	case ProblemUncertain:
		return &UncertainEffectError{World: p.World, Command: p.Key, Key: p.Effect, Position: p.Position}
	case ProblemRunway:
		return fmt.Errorf("%w: %w", p, lease.ErrLeaseRunway)
	}
	return fmt.Errorf("%w: %w", p, lease.ErrUnavailable)
}

func writeProblem(w http.ResponseWriter, err error) {
	p := problemOf(err)
	httpapi.WriteProblem(w, p.Status, p.RetryAfterMS, p)
}
