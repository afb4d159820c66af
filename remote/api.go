package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"time"
)

// Run is a run as the API shows it.
type Run struct {
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
	ExpiresAt   string          `json:"expires_at,omitempty"`
	FinishedAt  string          `json:"finished_at,omitempty"`
}

// Lease is a claimed run and the deadline the server vouches for: this
// process's send time of the claim plus the runway it answered.
type Lease struct {
	Run
	RunwayMS int64     `json:"runway_ms"`
	Sent     time.Time `json:"-"` // this process's send time of the claim
	Deadline time.Time `json:"-"` // Sent + RunwayMS
}

// Enqueue is one run to enqueue.
type Enqueue struct {
	Queue       string          `json:"queue"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Priority    int             `json:"priority,omitempty"`
	DelayMS     int64           `json:"delay_ms,omitempty"`
	MaxAttempts int             `json:"max_attempts,omitempty"`
	UniqueKey   string          `json:"unique_key,omitempty"`
}

// Enqueue enqueues runs in one batch; each answer says whether a unique
// key found an existing run.
func (c *Client) Enqueue(ctx context.Context, rs ...Enqueue) ([]Run, error) {
	var out struct {
		Runs []struct {
			Run Run `json:"run"`
		} `json:"runs"`
	}
	if _, err := c.call(ctx, "POST", "/v1/runs", map[string]any{"runs": rs}, &out); err != nil {
		return nil, err
	}
	got := make([]Run, len(out.Runs))
	for i, r := range out.Runs {
		got[i] = r.Run
	}
	return got, nil
}

// Claim claims up to limit runs of queue for owner, long-polling up to
// wait when none is available.
func (c *Client) Claim(ctx context.Context, queue, owner string, limit int, wait time.Duration) ([]Lease, error) {
	var out struct {
		Runs []Lease `json:"runs"`
	}
	sent, err := c.call(ctx, "POST", "/v1/runs/claim", map[string]any{"queue": queue, "owner": owner, "limit": limit, "wait_ms": wait.Milliseconds()}, &out)
	if err != nil {
		return nil, err
	}
	for i := range out.Runs {
		out.Runs[i].Sent, out.Runs[i].Deadline = sent, deadline(sent, out.Runs[i].RunwayMS)
	}
	return out.Runs, nil
}

func deadline(sent time.Time, runwayMS int64) time.Time {
	return sent.Add(time.Duration(runwayMS) * time.Millisecond)
}

// Renewal is a renewal's answer: the new deadline (this process's send
// time plus the runway the server vouches for) and how it was made
// ("writebehind" or "sync").
type Renewal struct {
	RunwayMS int64     `json:"runway_ms"`
	Renewal  string    `json:"renewal"`
	Sent     time.Time `json:"-"` // this process's send time of the renewal
	Deadline time.Time `json:"-"` // Sent + RunwayMS
}

// Renew renews a lease (write-behind on the server when it keeps it).
func (c *Client) Renew(ctx context.Context, id, fence int64, owner string) (Renewal, error) {
	var out Renewal
	sent, err := c.call(ctx, "POST", runPath(id, "/renew"), map[string]any{"fence": fence, "owner": owner}, &out)
	out.Sent, out.Deadline = sent, deadline(sent, out.RunwayMS)
	return out, err
}

// Complete completes a held run with result (JSON or nil).
func (c *Client) Complete(ctx context.Context, id, fence int64, result json.RawMessage) (Run, error) {
	var out struct{ Run Run }
	_, err := c.call(ctx, "POST", runPath(id, "/complete"), map[string]any{"fence": fence, "result": result}, &out)
	return out.Run, err
}

// Completion is one item of CompleteMany.
type Completion struct {
	ID     int64           `json:"id"`
	Fence  int64           `json:"fence"`
	Result json.RawMessage `json:"result,omitempty"`
}

// CompleteMany completes a batch in one call and one store commit: the
// ids completed and the indexes of the completions refused for their
// fence.
func (c *Client) CompleteMany(ctx context.Context, cs []Completion) (completed []int64, fenced []int, err error) {
	var out struct {
		Completed []int64 `json:"completed"`
		Fenced    []int   `json:"fenced"`
	}
	_, err = c.call(ctx, "POST", "/v1/runs/complete", map[string]any{"runs": cs}, &out)
	return out.Completed, out.Fenced, err
}

// Fail fails the attempt; retryAfter < 0 leaves the delay to the server's
// backoff.
func (c *Client) Fail(ctx context.Context, id, fence int64, reason string, retryAfter time.Duration) error {
	body := map[string]any{"fence": fence, "reason": reason}
	if retryAfter >= 0 {
		body["retry_after_ms"] = retryAfter.Milliseconds()
	}
	_, err := c.call(ctx, "POST", runPath(id, "/fail"), body, nil)
	return err
}

// Snooze puts a held run back to available after delay without using up
// its attempt (POST /v1/runs/{id}/snooze). maxSnoozes bounds the run's
// snoozes over its life (0: the server's default, 100); a run at its bound
// is a conflict problem and stays held, for the caller to fail.
func (c *Client) Snooze(ctx context.Context, id, fence int64, delay time.Duration, maxSnoozes int) (Run, error) {
	var out struct{ Run Run }
	_, err := c.call(ctx, "POST", runPath(id, "/snooze"), map[string]any{"fence": fence, "delay_ms": delay.Milliseconds(), "max_snoozes": maxSnoozes}, &out)
	return out.Run, err
}

// Block parks a held run until it is unblocked.
func (c *Client) Block(ctx context.Context, id, fence int64, reason string) error {
	_, err := c.call(ctx, "POST", runPath(id, "/block"), map[string]any{"fence": fence, "reason": reason}, nil)
	return err
}

// Get reads a run.
func (c *Client) Get(ctx context.Context, id int64) (Run, error) {
	var out struct{ Run Run }
	_, err := c.call(ctx, "GET", runPath(id, ""), nil, &out)
	return out.Run, err
}

// Effect is an effect's ledger row.
type Effect struct {
	Key       string          `json:"key"`
	Fence     int64           `json:"fence"`
	Committed bool            `json:"committed"`
	Result    json.RawMessage `json:"result,omitempty"`
}

// EffectStart answers EffectBegin: Outcome "started" (invoke once before
// Deadline, then commit) or "committed" (use Effect.Result).
type EffectStart struct {
	Outcome        string `json:"outcome"`
	Effect         Effect `json:"effect"`
	IdempotencyKey string `json:"idempotency_key"`
	RunwayMS       int64  `json:"runway_ms"`
	Deadline       time.Time
}

// EffectBegin passes the server's gate for an effect of at most maxDur and
// records its intent.
func (c *Client) EffectBegin(ctx context.Context, id, fence int64, owner, key string, maxDur time.Duration) (EffectStart, error) {
	var out EffectStart
	sent, err := c.call(ctx, "POST", runPath(id, "/effects/begin"),
		map[string]any{"key": key, "fence": fence, "owner": owner, "max_duration_ms": maxDur.Milliseconds()}, &out)
	out.Deadline = deadline(sent, out.RunwayMS)
	return out, err
}

// EffectCommit records an effect's result under the fence that began it.
func (c *Client) EffectCommit(ctx context.Context, id, fence int64, key string, result json.RawMessage) error {
	_, err := c.call(ctx, "POST", runPath(id, "/effects/commit"), map[string]any{"key": key, "fence": fence, "result": result}, nil)
	return err
}

// EffectResolve settles an uncertain effect.
func (c *Client) EffectResolve(ctx context.Context, id, fence int64, key string, happened bool, result json.RawMessage) error {
	_, err := c.call(ctx, "POST", runPath(id, "/effects/resolve"),
		map[string]any{"key": key, "fence": fence, "happened": happened, "result": result}, nil)
	return err
}

// Event is one event to emit: seq numbers the run's events 1, 2, 3 …
// within its fence, so a retried batch is applied once.
type Event struct {
	Seq     int64           `json:"seq"`
	Kind    string          `json:"kind"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Emit appends events under fence; durable when it returns.
func (c *Client) Emit(ctx context.Context, id, fence int64, evs ...Event) error {
	_, err := c.call(ctx, "POST", runPath(id, "/events"), map[string]any{"fence": fence, "events": evs}, nil)
	return err
}

// StoredEvent is a durable event.
type StoredEvent struct {
	Fence   int64           `json:"fence"`
	Seq     int64           `json:"seq"`
	Kind    string          `json:"kind"`
	Payload json.RawMessage `json:"payload"`
}

// Events reads a run's durable events after (afterFence, afterSeq).
func (c *Client) Events(ctx context.Context, id, afterFence, afterSeq int64) ([]StoredEvent, error) {
	var out struct{ Events []StoredEvent }
	q := url.Values{"after_fence": {fmt.Sprint(afterFence)}, "after_seq": {fmt.Sprint(afterSeq)}}
	_, err := c.call(ctx, "GET", runPath(id, "/events?"+q.Encode()), nil, &out)
	return out.Events, err
}

func runPath(id int64, tail string) string { return fmt.Sprintf("/v1/runs/%d%s", id, tail) }
