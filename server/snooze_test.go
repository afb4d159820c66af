package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestSnoozeOverHTTP: POST /v1/runs/{id}/snooze puts a held run back to
// available with its attempt given back and the snooze counted; the next
// claim counts the same attempt again. A stale fence is the fenced
// problem and changes nothing; a run at its max_snoozes bound is the
// conflict problem and stays held (the runner fails it next); a negative
// delay is invalid. On both stores.
func TestSnoozeOverHTTP(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		id := b.enqueue(t, "q", `{}`).ID
		c := b.claimOne(t, "q", "runner")
		require.Equal(t, 1, c.Attempt)

		r := b.post(t, runPath(id, "/snooze"), map[string]any{"fence": c.Fence, "delay_ms": -1})
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		r.problem(t, "invalid")

		before := b.snapshot(t, id)
		r = b.post(t, runPath(id, "/snooze"), map[string]any{"fence": c.Fence + 1, "delay_ms": 0})
		require.Equal(t, c.Fence, r.problem(t, "fenced").CurrentFence)
		require.Equal(t, before, b.snapshot(t, id), "a stale snooze changed nothing")

		var snoozed struct {
			Run struct {
				State   string `json:"state"`
				Attempt int    `json:"attempt"`
				Snoozes int    `json:"snoozes"`
			} `json:"run"`
		}
		b.post(t, runPath(id, "/snooze"), map[string]any{"fence": c.Fence, "delay_ms": 0}).ok(t, &snoozed)
		require.Equal(t, "available", snoozed.Run.State)
		require.Equal(t, 0, snoozed.Run.Attempt, "the attempt is given back")
		require.Equal(t, 1, snoozed.Run.Snoozes)

		again := b.claimOne(t, "q", "runner")
		require.Equal(t, 1, again.Attempt, "the same attempt again")
		require.Greater(t, again.Fence, c.Fence)

		before = b.snapshot(t, id)
		r = b.post(t, runPath(id, "/snooze"), map[string]any{"fence": again.Fence, "delay_ms": 0, "max_snoozes": 1})
		require.Equal(t, http.StatusConflict, r.status, "%s", r.body)
		r.problem(t, "conflict")
		require.Equal(t, before, b.snapshot(t, id), "a snooze past its bound changed nothing: the run is still held")
		var done runBody
		b.post(t, runPath(id, "/fail"), map[string]any{"fence": again.Fence, "reason": "snooze limit"}).ok(t, &done)
		require.NotEqual(t, "running", done.Run.State, "the runner fails it under the same fence")

		b.post(t, runPath(id, "/snooze"), map[string]any{"fence": c.Fence, "delay_ms": 0, "bogus": 1}).problem(t, "invalid")
	})
}
