package server_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestRetryOverHTTP: POST /v1/runs/{id}/retry on both stores — River's
// JobRetry for a failed run (one attempt more), the fence the caller saw
// guarding a second retry, typed refusals for a run in another state and
// for bad input, and the scope rule: work or admin on the run's queue.
func TestRetryOverHTTP(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		b := setup(t, open, leasehold.Config{}, server.Config{})
		var e enqueued
		b.post(t, "/v1/runs", map[string]any{"runs": []map[string]any{{"queue": "mail", "max_attempts": 1}}}).ok(t, &e)
		held := b.claimOne(t, "mail", "w")
		var failed runBody
		b.post(t, runPath(held.ID, "/fail"), map[string]any{"fence": held.Fence, "reason": "smtp down"}).ok(t, &failed)
		require.Equal(t, "failed", failed.Run.State)

		// Scopes: read may not; work on another queue may not; work on
		// this queue may.
		b.as(t, b.mint(t, "read")).post(t, runPath(held.ID, "/retry"), map[string]any{}).problem(t, "forbidden")
		b.as(t, b.mint(t, "work:queue:bills")).post(t, runPath(held.ID, "/retry"), map[string]any{}).problem(t, "forbidden")
		require.Equal(t, "failed", b.runState(t, held.ID), "a refused retry changed nothing")

		// Bad input is a typed 400, before any write.
		b.post(t, runPath(held.ID, "/retry"), map[string]any{"fence": -1}).problem(t, "invalid")
		b.post(t, runPath(held.ID, "/retry"), map[string]any{"fence": "1"}).problem(t, "invalid")
		b.post(t, runPath(held.ID, "/retry"), map[string]any{"nope": 1}).problem(t, "invalid")
		b.post(t, "/v1/runs/0/retry", map[string]any{}).problem(t, "invalid")
		b.post(t, "/v1/runs/999999/retry", map[string]any{}).problem(t, "not-found")

		worker := b.as(t, b.mint(t, "work:queue:mail"))
		var got runBody
		worker.post(t, runPath(held.ID, "/retry"), map[string]any{"fence": failed.Run.Fence}).ok(t, &got)
		require.Equal(t, "available", got.Run.State)
		require.Equal(t, 1, got.Run.Attempt)
		require.Equal(t, 2, got.Run.MaxAttempts, "one attempt more than the spent budget")

		// A second operator who saw the same page: the run is available
		// now (conflict); once claimed again, the fence moved (fenced).
		b.post(t, runPath(held.ID, "/retry"), map[string]any{"fence": failed.Run.Fence}).problem(t, "conflict")
		again := b.claimOne(t, "mail", "w2")
		require.Equal(t, held.ID, again.ID)
		require.Equal(t, 2, again.Attempt)
		var failed2 runBody
		b.post(t, runPath(held.ID, "/fail"), map[string]any{"fence": again.Fence, "reason": "still down"}).ok(t, &failed2)
		b.post(t, runPath(held.ID, "/retry"), map[string]any{"fence": failed.Run.Fence}).problem(t, "fenced")
		b.post(t, runPath(held.ID, "/retry"), map[string]any{}).ok(t, &got)
		require.Equal(t, 3, got.Run.MaxAttempts)
	})
}
