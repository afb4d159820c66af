package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/server"
)

// TestARunsLifeOverHTTP walks every run endpoint's success path on both
// stores: enqueue (a batch, a unique key taken twice), claim with runway,
// renew, an effect begun, committed and found committed, events emitted
// (a retried batch applied once) and read, complete, lookup.
func TestARunsLifeOverHTTP(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		timing := lease.RunDefaults()

		var e enqueued
		r := b.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{
			{"queue": "emails", "payload": json.RawMessage(`{ "to": "ada" }`), "unique_key": "welcome-ada", "max_attempts": 3},
			{"queue": "emails", "payload": json.RawMessage(`{"to":"bob"}`), "priority": 5},
		}})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		r.ok(t, &e)
		require.Len(t, e.Runs, 2)
		first := e.Runs[0].Run
		require.Equal(t, "available", first.State)
		require.JSONEq(t, `{"to":"ada"}`, string(first.Payload))
		require.Equal(t, `{"to":"ada"}`, string(first.Payload), "payloads are stored compact")

		var again enqueued
		b.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{{"queue": "emails", "unique_key": "welcome-ada"}}}).ok(t, &again)
		require.True(t, again.Runs[0].Existing)
		require.Equal(t, first.ID, again.Runs[0].Run.ID)

		var claimed runsBody
		b.post(t, "/v1/runs/claim", map[string]any{"queue": "emails", "owner": "runner-1", "limit": 10}).ok(t, &claimed)
		require.Len(t, claimed.Runs, 2)
		c := claimed.Runs[0]
		require.Equal(t, first.ID, c.ID, "priority 0 first")
		require.Equal(t, "running", c.State)
		require.Equal(t, int64(1), c.Fence)
		require.Equal(t, "runner-1", c.Owner)
		require.Positive(t, c.RunwayMS)
		require.LessOrEqual(t, c.RunwayMS, (timing.Lease - timing.Skew).Milliseconds())

		var renewed run
		b.post(t, runPath(c.ID, "/renew"), map[string]any{"fence": c.Fence, "owner": "runner-1"}).ok(t, &renewed)
		require.Positive(t, renewed.RunwayMS)
		require.LessOrEqual(t, renewed.RunwayMS, (timing.Lease - timing.Skew).Milliseconds())

		var begun struct {
			Outcome        string `json:"outcome"`
			IdempotencyKey string `json:"idempotency_key"`
			RunwayMS       int64  `json:"runway_ms"`
			Effect         struct {
				Fence     int64           `json:"fence"`
				Committed bool            `json:"committed"`
				Result    json.RawMessage `json:"result"`
			} `json:"effect"`
		}
		begin := map[string]any{"key": "send", "fence": c.Fence, "owner": "runner-1", "max_duration_ms": 10000}
		b.post(t, runPath(c.ID, "/effects/begin"), begin).ok(t, &begun)
		require.Equal(t, "started", begun.Outcome)
		require.Equal(t, jsonID(c.ID)+":send", begun.IdempotencyKey)
		require.GreaterOrEqual(t, begun.RunwayMS, int64(10000)+timing.Margin.Milliseconds(), "the gate vouched for the effect")
		b.post(t, runPath(c.ID, "/effects/commit"), map[string]any{"key": "send", "fence": c.Fence, "result": json.RawMessage(`{"msg":"m-1"}`)}).ok(t, &struct{}{})
		b.post(t, runPath(c.ID, "/effects/begin"), begin).ok(t, &begun)
		require.Equal(t, "committed", begun.Outcome, "a committed effect is not invoked again")
		require.JSONEq(t, `{"msg":"m-1"}`, string(begun.Effect.Result))

		events := map[string]any{"fence": c.Fence, "events": []map[string]any{
			{"seq": 1, "kind": "progress", "payload": json.RawMessage(`{"pct":50}`)},
			{"seq": 2, "kind": "progress", "payload": json.RawMessage(`{"pct":100}`)}}}
		var emitted struct {
			Accepted int
			RunwayMS int64 `json:"runway_ms"`
		}
		b.post(t, runPath(c.ID, "/events"), events).ok(t, &emitted)
		require.Equal(t, 2, emitted.Accepted)
		require.Positive(t, emitted.RunwayMS)
		b.post(t, runPath(c.ID, "/events"), events).ok(t, &emitted) // a retry
		var evs struct {
			Events []struct {
				Fence, Seq int64
				Kind       string
			} `json:"events"`
		}
		b.get(t, runPath(c.ID, "/events")).ok(t, &evs)
		require.Len(t, evs.Events, 2, "the retried batch was applied once")
		b.get(t, runPath(c.ID, "/events?after_fence=1&after_seq=1")).ok(t, &evs)
		require.Len(t, evs.Events, 1)
		require.Equal(t, int64(2), evs.Events[0].Seq)

		var done runBody
		b.post(t, runPath(c.ID, "/complete"), map[string]any{"fence": c.Fence, "result": json.RawMessage(`{"ok":true}`)}).ok(t, &done)
		require.Equal(t, "completed", done.Run.State)
		var got runBody
		b.get(t, runPath(c.ID, "")).ok(t, &got)
		require.Equal(t, "completed", got.Run.State)
		require.JSONEq(t, `{"ok":true}`, string(got.Run.Result))
		var effs struct {
			Effects []struct {
				Key       string
				Committed bool
			} `json:"effects"`
		}
		b.get(t, runPath(c.ID, "/effects")).ok(t, &effs)
		require.Len(t, effs.Effects, 1)
		require.True(t, effs.Effects[0].Committed)

		// The second run: fail (retried), claimed again, block, cancel.
		second := claimed.Runs[1]
		var failed runBody
		b.post(t, runPath(second.ID, "/fail"), map[string]any{"fence": second.Fence, "reason": "smtp 451", "retry_after_ms": 0}).ok(t, &failed)
		require.Equal(t, "available", failed.Run.State)
		require.Equal(t, "smtp 451", failed.Run.Reason)
		again2 := b.claimOne(t, "emails", "runner-2")
		require.Equal(t, second.ID, again2.ID)
		require.Equal(t, second.Fence+1, again2.Fence)
		require.Equal(t, 2, again2.Attempt)
		var blocked runBody
		b.post(t, runPath(second.ID, "/block"), map[string]any{"fence": again2.Fence, "reason": "waiting for approval"}).ok(t, &blocked)
		require.Equal(t, "blocked", blocked.Run.State)
		b.post(t, runPath(second.ID, "/unblock"), map[string]any{}).ok(t, &blocked)
		require.Equal(t, "available", blocked.Run.State)
		b.post(t, runPath(second.ID, "/unblock"), map[string]any{}).problem(t, "conflict")
		var cancelled runBody
		b.post(t, runPath(second.ID, "/cancel"), map[string]any{"reason": "operator"}).ok(t, &cancelled)
		require.Equal(t, "cancelled", cancelled.Run.State)
		require.Greater(t, cancelled.Run.Fence, again2.Fence, "cancel increments the fence")

		// A fail without retry_after_ms takes the server's backoff.
		third := b.enqueue(t, "emails", `{}`)
		held := b.claimOne(t, "emails", "runner-3")
		require.Equal(t, third.ID, held.ID)
		b.post(t, runPath(held.ID, "/fail"), map[string]any{"fence": held.Fence, "reason": "boom"}).ok(t, &failed)
		require.Equal(t, "available", failed.Run.State)
	})
}

func jsonID(id int64) string { b, _ := json.Marshal(id); return string(b) }
