package remote

import (
	"fmt"
	"strings"

	"github.com/leasehold/leasehold"
)

// problemBase prefixes every problem type URI the server answers with.
const problemBase = "https://leasehold.dev/problems/"

// Problem is an RFC 9457 problem document the server answered with. It
// matches the leasehold sentinel of its type with errors.Is: fenced →
// ErrFenced, lease-lost → ErrLeaseLost, lease-runway → ErrLeaseRunway,
// uncertain → ErrUncertain, invalid → ErrInvalid, not-found → ErrNotFound,
// conflict → ErrConflict, closed → ErrClosed, unknown-queue →
// ErrUnknownQueue, unavailable → ErrUnavailable.
type Problem struct {
	Type         string `json:"type"`
	Title        string `json:"title"`
	Status       int    `json:"status"`
	Detail       string `json:"detail"`
	Field        string `json:"field"`
	RunID        int64  `json:"run_id"`
	Fence        int64  `json:"fence"`
	CurrentFence int64  `json:"current_fence"`
	State        string `json:"state"`
	Key          string `json:"key"`
	IntentFence  int64  `json:"intent_fence"`
	NeededMS     int64  `json:"needed_ms"`
	AvailableMS  int64  `json:"available_ms"`
	Queue        string `json:"queue"`
}

// Kind is the type's last segment: "fenced", "lease-lost" …
func (p *Problem) Kind() string { return strings.TrimPrefix(p.Type, problemBase) }

func (p *Problem) Error() string {
	return fmt.Sprintf("leasehold serve: %s (%d): %s", p.Title, p.Status, p.Detail)
}

var sentinels = map[string]error{
	"fenced": leasehold.ErrFenced, "lease-lost": leasehold.ErrLeaseLost, "lease-runway": leasehold.ErrLeaseRunway,
	"uncertain": leasehold.ErrUncertain, "invalid": leasehold.ErrInvalid, "not-found": leasehold.ErrNotFound,
	"conflict": leasehold.ErrConflict, "closed": leasehold.ErrClosed, "unknown-queue": leasehold.ErrUnknownQueue,
	"unavailable": leasehold.ErrUnavailable, "too-large": leasehold.ErrInvalid,
	"not-holder": leasehold.ErrNotHolder, "seen-behind": leasehold.ErrSeenBehind, "lease-held": leasehold.ErrLeaseHeld,
}

// Is matches the problem's sentinel.
func (p *Problem) Is(target error) bool {
	s, ok := sentinels[p.Kind()]
	return ok && s == target
}
