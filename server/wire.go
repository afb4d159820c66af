package server

import (
	"encoding/json"
	"time"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/httpapi"
)

// The JSON shapes of the API. Request types decode strictly (Decode);
// their string fields are httpapi.StrictString, so a key or reason is
// applied byte for byte as sent or refused, never repaired. Times are
// the store's clock, RFC 3339 with nanoseconds; durations are
// milliseconds.

// runBody is a run's row.
type runBody struct {
	ID          int64           `json:"id"`
	Queue       string          `json:"queue"`
	Payload     json.RawMessage `json:"payload"`
	Priority    int             `json:"priority"`
	State       string          `json:"state"`
	Attempt     int             `json:"attempt"`
	MaxAttempts int             `json:"max_attempts"`
	Fence       int64           `json:"fence"`
	Owner       string          `json:"owner,omitempty"`
	UniqueKey   string          `json:"unique_key,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	Result      json.RawMessage `json:"result,omitempty"`
	ScheduledAt string          `json:"scheduled_at"`
	ExpiresAt   string          `json:"expires_at,omitempty"`
	CreatedAt   string          `json:"created_at"`
	FinishedAt  string          `json:"finished_at,omitempty"`
	Snoozes     int             `json:"snoozes,omitempty"`      // leasehold.Snooze, never reset
	ReclaimedAt string          `json:"reclaimed_at,omitempty"` // the last reclaim; a reclaim keeps scheduled_at
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func raw(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

func runOf(r *driver.Run) runBody {
	return runBody{ID: r.ID, Queue: r.Queue, Payload: raw(r.Payload), Priority: r.Priority, State: string(r.State),
		Attempt: r.Attempt, MaxAttempts: r.MaxAttempts, Fence: r.Fence, Owner: r.Owner, UniqueKey: r.UniqueKey,
		Reason: r.Reason, Result: raw(r.Result), ScheduledAt: stamp(r.ScheduledAt), ExpiresAt: stamp(r.ExpiresAt),
		CreatedAt: stamp(r.CreatedAt), FinishedAt: stamp(r.FinishedAt), Snoozes: r.Snoozes, ReclaimedAt: stamp(r.ReclaimedAt)}
}

// enqueueRequest is POST /v1/runs.
type enqueueRequest struct {
	Runs []enqueueItem `json:"runs"`
}

type enqueueItem struct {
	Queue       httpapi.StrictString `json:"queue"`
	Payload     json.RawMessage      `json:"payload"`
	Priority    int                  `json:"priority"`
	DelayMS     int64                `json:"delay_ms"`
	MaxAttempts int                  `json:"max_attempts"`
	UniqueKey   httpapi.StrictString `json:"unique_key"`
}

func (e enqueueItem) enqueue() leasehold.Enqueue {
	return leasehold.Enqueue{Queue: string(e.Queue), Payload: e.Payload, Priority: e.Priority,
		Delay: msDuration(e.DelayMS), MaxAttempts: e.MaxAttempts, UniqueKey: string(e.UniqueKey)}
}

// msDuration converts milliseconds, saturating instead of overflowing:
// the input rules below refuse the saturated value by its range.
func msDuration(ms int64) time.Duration {
	const limit = int64(1<<63-1) / int64(time.Millisecond)
	switch {
	case ms > limit:
		return time.Duration(1<<63 - 1)
	case ms < -limit:
		return time.Duration(-1 << 63)
	}
	return time.Duration(ms) * time.Millisecond
}

type enqueuedBody struct {
	Run      runBody `json:"run"`
	Existing bool    `json:"existing,omitempty"`
}

type enqueueResponse struct {
	Runs []enqueuedBody `json:"runs"`
}

// claimRequest is POST /v1/runs/claim.
type claimRequest struct {
	Queue  httpapi.StrictString `json:"queue"`
	Owner  httpapi.StrictString `json:"owner"`
	Limit  int                  `json:"limit"`
	WaitMS int64                `json:"wait_ms"`
}

// leasedRuns answers a claim: the runs claimed, each with the runway the
// server vouches for.
type leasedRuns struct {
	Runs []leasedRun `json:"runs"`
}

type leasedRun struct {
	runBody
	RunwayMS int64 `json:"runway_ms"`
}

// renewRequest is POST /v1/runs/{id}/renew.
type renewRequest struct {
	Fence int64                `json:"fence"`
	Owner httpapi.StrictString `json:"owner"`
}

// renewResponse answers a renewal: the runway the server vouches for
// (the client's deadline is its own send time of this request plus it),
// and how it was made — "writebehind" (marked for the keeper's next
// drain) or "sync" (one fenced write, made now).
type renewResponse struct {
	ID       int64  `json:"id"`
	Fence    int64  `json:"fence"`
	RunwayMS int64  `json:"runway_ms"`
	Renewal  string `json:"renewal"`
}

// completeRequest is POST /v1/runs/{id}/complete.
type completeRequest struct {
	Fence  int64           `json:"fence"`
	Result json.RawMessage `json:"result"`
}

// completeManyRequest is POST /v1/runs/complete.
type completeManyRequest struct {
	Runs []completeManyItem `json:"runs"`
}

type completeManyItem struct {
	ID     int64           `json:"id"`
	Fence  int64           `json:"fence"`
	Result json.RawMessage `json:"result"`
}

// completeManyResponse: the ids completed, in batch order, and the
// indexes into the batch of the completions refused for their fence.
type completeManyResponse struct {
	Completed []int64 `json:"completed"`
	Fenced    []int   `json:"fenced"`
}

// failRequest is POST /v1/runs/{id}/fail: RetryAfterMS, when given,
// overrides the server's backoff.
type failRequest struct {
	Fence        int64                `json:"fence"`
	Reason       httpapi.StrictString `json:"reason"`
	RetryAfterMS *int64               `json:"retry_after_ms"`
}

// blockRequest is POST /v1/runs/{id}/block.
type blockRequest struct {
	Fence  int64                `json:"fence"`
	Reason httpapi.StrictString `json:"reason"`
}

// cancelRequest is POST /v1/runs/{id}/cancel (an operator action: no fence).
type cancelRequest struct {
	Reason httpapi.StrictString `json:"reason"`
}

type runResponse struct {
	Run runBody `json:"run"`
}

// effectBeginRequest is POST /v1/runs/{id}/effects/begin.
type effectBeginRequest struct {
	Key           httpapi.StrictString `json:"key"`
	Fence         int64                `json:"fence"`
	Owner         httpapi.StrictString `json:"owner"`
	MaxDurationMS int64                `json:"max_duration_ms"`
}

// effectCommitRequest is POST /v1/runs/{id}/effects/commit.
type effectCommitRequest struct {
	Key    httpapi.StrictString `json:"key"`
	Fence  int64                `json:"fence"`
	Result json.RawMessage      `json:"result"`
}

// effectResolveRequest is POST /v1/runs/{id}/effects/resolve.
type effectResolveRequest struct {
	Key      httpapi.StrictString `json:"key"`
	Fence    int64                `json:"fence"`
	Happened bool                 `json:"happened"`
	Result   json.RawMessage      `json:"result"`
}

type effectBody struct {
	RunID       int64           `json:"run_id"`
	Key         string          `json:"key"`
	Fence       int64           `json:"fence"`
	Committed   bool            `json:"committed"`
	Result      json.RawMessage `json:"result,omitempty"`
	CreatedAt   string          `json:"created_at"`
	CommittedAt string          `json:"committed_at,omitempty"`
}

func effectOf(e *driver.Effect) effectBody {
	return effectBody{RunID: e.RunID, Key: e.Key, Fence: e.Fence, Committed: e.Committed, Result: raw(e.Result),
		CreatedAt: stamp(e.CreatedAt), CommittedAt: stamp(e.CommittedAt)}
}

// effectBeginResponse: Outcome "started" (invoke the effect once, before
// the deadline runway_ms gives, then commit) or "committed" (done before:
// use Effect.Result, do not invoke). An uncertain effect is a problem.
type effectBeginResponse struct {
	Outcome        string     `json:"outcome"`
	Effect         effectBody `json:"effect"`
	IdempotencyKey string     `json:"idempotency_key"`
	RunwayMS       int64      `json:"runway_ms"`
}

// effectResponse answers a commit or a resolve, with the lease's runway
// (0 when this server has no confirmed send for it: renew first).
type effectResponse struct {
	Effect   effectBody `json:"effect"`
	RunwayMS int64      `json:"runway_ms"`
}

type effectsResponse struct {
	Effects []effectBody `json:"effects"`
}

// emitRequest is POST /v1/runs/{id}/events: the runner numbers its events
// 1, 2, 3 … within its fence, so a retried batch is applied once.
type emitRequest struct {
	Fence  int64       `json:"fence"`
	Events []emitEvent `json:"events"`
}

type emitEvent struct {
	Seq     int64                `json:"seq"`
	Kind    httpapi.StrictString `json:"kind"`
	Payload json.RawMessage      `json:"payload"`
}

type emitResponse struct {
	Accepted int   `json:"accepted"`
	RunwayMS int64 `json:"runway_ms"` // as for effectResponse
}

type eventBody struct {
	Fence     int64           `json:"fence"`
	Seq       int64           `json:"seq"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt string          `json:"created_at"`
}

type eventsResponse struct {
	Events []eventBody `json:"events"`
}

// runsPage is GET /v1/runs: Next is the cursor of the next page, empty on
// the last.
type runsPage struct {
	Runs []runBody `json:"runs"`
	Next string    `json:"next,omitempty"`
}
