package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/server"
)

// TestEveryProblemIsTyped drives each refusal the API has through real
// HTTP on both stores and requires its problem document: the stable type,
// the status, and the members that say what to do next.
func TestEveryProblemIsTyped(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{Queues: []string{"emails"}}, server.Config{MaxBodyBytes: 4096})
		b.enqueue(t, "emails", `{}`)
		held := b.claimOne(t, "emails", "runner-1")

		// not found: a run, a fenced write on a run, a route.
		b.get(t, "/v1/runs/999999").problem(t, "not-found")
		b.post(t, "/v1/runs/999999/complete", map[string]any{"fence": 1}).problem(t, "not-found")
		b.get(t, "/v1/runs/999999/effects").problem(t, "not-found")
		b.get(t, "/v1/runs/999999/events").problem(t, "not-found")
		b.get(t, "/v2/nothing").problem(t, "not-found")

		// method not allowed, with Allow.
		r := b.do(t, http.MethodDelete, runPath(held.ID, ""), nil)
		require.Equal(t, http.StatusMethodNotAllowed, r.status)
		r.problem(t, "method-not-allowed")

		// invalid: the path, the input rules, the body's shape.
		p := b.get(t, "/v1/runs/abc").problem(t, "invalid")
		require.Equal(t, "id", p.Field)
		p = b.get(t, "/v1/runs/0").problem(t, "invalid")
		require.Equal(t, "id", p.Field)
		b.get(t, runPath(held.ID, "/events?limit=x")).problem(t, "invalid")
		p = b.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{{"queue": "emails", "priority": 5000}}}).problem(t, "invalid")
		require.Equal(t, http.StatusBadRequest, p.Status)
		require.Contains(t, p.Field, "priority")
		b.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{}}).problem(t, "invalid")
		b.post(t, "/v1/runs/claim", map[string]any{"queue": "emails", "owner": "o", "limit": 5000}).problem(t, "invalid")
		b.post(t, "/v1/runs/claim", map[string]any{"queue": "emails", "owner": "o", "wait_ms": -1}).problem(t, "invalid")
		b.post(t, "/v1/runs/claim", map[string]any{"queue": "emails", "owner": "o", "wait_ms": 31 * 60 * 1000}).problem(t, "invalid")
		b.post(t, runPath(held.ID, "/effects/begin"), map[string]any{"key": "k", "fence": held.Fence, "owner": "runner-1", "max_duration_ms": 0}).problem(t, "invalid")
		b.post(t, runPath(held.ID, "/effects/begin"), map[string]any{"key": "k", "fence": held.Fence, "owner": "runner-1", "max_duration_ms": 3600000}).problem(t, "invalid")
		b.post(t, runPath(held.ID, "/events"), map[string]any{"fence": held.Fence, "events": []map[string]any{{"seq": 0, "kind": "k"}}}).problem(t, "invalid")
		b.post(t, runPath(held.ID, "/complete"), map[string]any{"fence": held.Fence, "result": json.RawMessage(`{"deep":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`)}).problem(t, "invalid")
		for name, body := range map[string]string{
			"malformed":      `{"fence":`,
			"not-an-object":  `[1,2]`,
			"trailing":       `{"fence":1} {"fence":2}`,
			"unknown-field":  `{"fence":1,"fense":1}`,
			"wrong-type":     `{"fence":"1"}`,
			"invalid-utf8":   "{\"fence\":1,\"reason\":\"a\xffb\"}",
			"lone-surrogate": `{"fence":1,"reason":"a\ud800b"}`,
			"empty":          ``,
		} {
			t.Run(name, func(t *testing.T) {
				p := b.do(t, http.MethodPost, runPath(held.ID, "/fail"), []byte(body)).problem(t, "invalid")
				require.Equal(t, "body", p.Field)
			})
		}

		// too large: refused unread past the cap, naming it.
		big := []byte(`{"fence":1,"result":"` + strings.Repeat("x", 8192) + `"}`)
		p = b.do(t, http.MethodPost, runPath(held.ID, "/complete"), big).problem(t, "too-large")
		require.Equal(t, http.StatusRequestEntityTooLarge, p.Status)
		require.Equal(t, int64(4096), p.Limit)

		// unknown queue: Config.Queues is the closed set.
		p = b.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{{"queue": "smss"}}}).problem(t, "unknown-queue")
		require.Equal(t, "smss", p.Queue)

		// fenced: a write under a fence that is not the current one.
		p = b.post(t, runPath(held.ID, "/complete"), map[string]any{"fence": held.Fence + 5}).problem(t, "fenced")
		require.Equal(t, held.Fence, p.CurrentFence)
		require.Equal(t, held.Fence+5, p.Fence)
		require.Equal(t, "running", p.State)

		// lease lost: the fence is current but another owner holds it.
		b.post(t, runPath(held.ID, "/renew"), map[string]any{"fence": held.Fence, "owner": "runner-2"}).problem(t, "lease-lost")

		// uncertain: an intent under an older fence, never re-run silently.
		var begun struct{ Outcome string }
		b.post(t, runPath(held.ID, "/effects/begin"), map[string]any{"key": "charge", "fence": held.Fence, "owner": "runner-1", "max_duration_ms": 1000}).ok(t, &begun)
		require.Equal(t, "started", begun.Outcome)
		b.post(t, runPath(held.ID, "/fail"), map[string]any{"fence": held.Fence, "reason": "crashed mid-effect", "retry_after_ms": 0}).ok(t, &struct{}{})
		next := b.claimOne(t, "emails", "runner-2")
		require.Equal(t, held.ID, next.ID)
		p = b.post(t, runPath(next.ID, "/effects/begin"), map[string]any{"key": "charge", "fence": next.Fence, "owner": "runner-2", "max_duration_ms": 1000}).problem(t, "uncertain")
		require.Equal(t, held.Fence, p.IntentFence)
		require.Equal(t, "charge", p.Key)
		b.post(t, runPath(next.ID, "/effects/resolve"), map[string]any{"key": "charge", "fence": next.Fence, "happened": false}).ok(t, &struct{}{})
		b.post(t, runPath(next.ID, "/effects/begin"), map[string]any{"key": "charge", "fence": next.Fence, "owner": "runner-2", "max_duration_ms": 1000}).ok(t, &begun)
		require.Equal(t, "started", begun.Outcome, "resolved as not happened: started afresh")

		// conflict: an operator action the state does not allow.
		b.post(t, runPath(next.ID, "/complete"), map[string]any{"fence": next.Fence}).ok(t, &struct{}{})
		b.post(t, runPath(next.ID, "/cancel"), map[string]any{"reason": "too late"}).problem(t, "conflict")
	})
}

// steppingClock advances by step on every reading: the server's time
// passes between its renewal's send and the gate's check, as it does on a
// real machine, but by a known amount.
type steppingClock struct {
	*clock.Fake
	step time.Duration
}

func (c steppingClock) Now() time.Time {
	c.Fake.Advance(c.step)
	return c.Fake.Now()
}

// Since steps too: the server's keeper measures lag with Since.
func (c steppingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// TestTheGateRefusesAnEffectTheRunwayCannotCover: an effect that needs
// more runway than the server can vouch for — even right after the one
// synchronous renewal the gate makes — is refused with the runway problem
// naming both figures, and no intent is written.
func TestTheGateRefusesAnEffectTheRunwayCannotCover(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		clk := steppingClock{Fake: clock.NewFake(time.Unix(1_000_000, 0)), step: time.Second}
		b := setup(t, open, leasehold.Config{}, server.Config{Clock: clk})
		b.enqueue(t, "q", `{}`)
		held := b.claimOne(t, "q", "runner-1")
		// 40s is the longest effect the default timing allows (D_stop 45s
		// - margin 5s); with seconds gone since the renewal's send, less
		// than the 45s it needs is left.
		p := b.post(t, runPath(held.ID, "/effects/begin"), map[string]any{"key": "k", "fence": held.Fence, "owner": "runner-1", "max_duration_ms": 40000}).problem(t, "lease-runway")
		require.Equal(t, int64(45000), p.NeededMS)
		require.Less(t, p.AvailableMS, p.NeededMS)
		require.GreaterOrEqual(t, p.AvailableMS, int64(40000), "measured from the gate's own renewal, not the claim")
		var effs struct{ Effects []json.RawMessage }
		b.get(t, runPath(held.ID, "/effects")).ok(t, &effs)
		require.Empty(t, effs.Effects, "a refused gate writes no intent")
		var begun struct{ Outcome string }
		b.post(t, runPath(held.ID, "/effects/begin"), map[string]any{"key": "k", "fence": held.Fence, "owner": "runner-1", "max_duration_ms": 30000}).ok(t, &begun)
		require.Equal(t, "started", begun.Outcome)
	})
}

// TestAStaleFenceChangesNothing: a runner whose run was claimed again
// under a newer fence completes, commits an effect and emits under its old
// fence — each refused with the fenced problem naming the fence in force —
// and the run's row, effect ledger and event log read the same, byte for
// byte, before and after.
func TestAStaleFenceChangesNothing(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		b.enqueue(t, "q", `{"n":1}`)
		old := b.claimOne(t, "q", "zombie")
		b.post(t, runPath(old.ID, "/effects/begin"), map[string]any{"key": "pay", "fence": old.Fence, "owner": "zombie", "max_duration_ms": 1000}).ok(t, &struct{}{})
		b.post(t, runPath(old.ID, "/events"), map[string]any{"fence": old.Fence, "events": []map[string]any{{"seq": 1, "kind": "started"}}}).ok(t, &struct{}{})
		// The zombie's lease ends (here: a failed attempt, retried at once)
		// and another runner holds the run under the next fence.
		b.post(t, runPath(old.ID, "/fail"), map[string]any{"fence": old.Fence, "reason": "paused", "retry_after_ms": 0}).ok(t, &struct{}{})
		cur := b.claimOne(t, "q", "runner-2")
		require.Equal(t, old.Fence+1, cur.Fence)
		b.post(t, runPath(cur.ID, "/events"), map[string]any{"fence": cur.Fence, "events": []map[string]any{{"seq": 1, "kind": "started"}}}).ok(t, &struct{}{})

		before := b.snapshot(t, old.ID)
		rowBefore, err := b.c.Run(t.Context(), old.ID)
		require.NoError(t, err)
		for name, call := range map[string]func() reply{
			"complete": func() reply {
				return b.post(t, runPath(old.ID, "/complete"), map[string]any{"fence": old.Fence, "result": json.RawMessage(`{"done":1}`)})
			},
			"effect-commit": func() reply {
				return b.post(t, runPath(old.ID, "/effects/commit"), map[string]any{"key": "pay", "fence": old.Fence, "result": json.RawMessage(`{"paid":1}`)})
			},
			"emit": func() reply {
				return b.post(t, runPath(old.ID, "/events"), map[string]any{"fence": old.Fence, "events": []map[string]any{{"seq": 2, "kind": "done"}}})
			},
			"fail": func() reply {
				return b.post(t, runPath(old.ID, "/fail"), map[string]any{"fence": old.Fence, "retry_after_ms": 0})
			},
			"block": func() reply { return b.post(t, runPath(old.ID, "/block"), map[string]any{"fence": old.Fence}) },
			"renew": func() reply {
				return b.post(t, runPath(old.ID, "/renew"), map[string]any{"fence": old.Fence, "owner": "zombie"})
			},
			"effect-resolve": func() reply {
				return b.post(t, runPath(old.ID, "/effects/resolve"), map[string]any{"key": "pay", "fence": old.Fence, "happened": true})
			},
		} {
			p := call().problem(t, "fenced")
			require.Equal(t, http.StatusConflict, p.Status, name)
			if name != "effect-commit" && name != "effect-resolve" {
				require.Equal(t, cur.Fence, p.CurrentFence, name)
			}
		}
		after := b.snapshot(t, old.ID)
		require.Equal(t, before, after, "a stale-fence call changed what the API shows")
		rowAfter, err := b.c.Run(t.Context(), old.ID)
		require.NoError(t, err)
		require.Equal(t, rowBefore, rowAfter, "a stale-fence call changed the row")
		require.True(t, bytes.Contains([]byte(after), []byte(`"state":"running"`)))
	})
}
