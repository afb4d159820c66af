package drivertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// Release (RunRelease): a worker's graceful stop gives a held run back at
// once, fenced, its attempt and its place in the queue kept.

var releaseCases = []Case{
	{"RunReleaseGivesTheRunBackAtOnceInItsPlace", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		first := e.enqueueOne(runs.Enqueue{Queue: "q", MaxAttempts: 1})
		e.h.Clock.Advance(1000)
		e.enqueueOne(runs.Enqueue{Queue: "q"})
		r := e.claim("q", "w", 1)[0]
		require.Equal(t, first.Run.ID, r.ID)
		got, err := e.d.RunRelease(e.ctx, &driver.RunReleaseParams{ID: r.ID, Fence: r.Fence, Reason: "worker stopped"})
		require.NoError(t, err)
		require.Equal(t, runs.StateAvailable, got.State)
		require.Zero(t, got.Attempt, "the stop interrupted the attempt: given back")
		require.Equal(t, r.Fence, got.Fence)
		require.Equal(t, first.Run.ScheduledAt, got.ScheduledAt, "its place in the queue kept")
		require.Equal(t, "worker stopped", got.Reason)
		require.Empty(t, got.Owner)
		require.True(t, got.ExpiresAt.IsZero())
		require.Equal(t, got, e.run(r.ID))
		e.requireFencedOut(r.ID, r.Fence, "w")

		again := e.claim("q", "w2", 1)
		require.Len(t, again, 1, "claimable at once, no expiry to wait for")
		require.Equal(t, r.ID, again[0].ID, "before the run enqueued after it")
		require.Equal(t, 1, again[0].Attempt, "a run of one attempt still has it")
		require.Equal(t, r.Fence+1, again[0].Fence)

		_, err = e.d.RunRelease(e.ctx, &driver.RunReleaseParams{ID: r.ID, Fence: r.Fence, Reason: "late"})
		require.ErrorIs(t, err, driver.ErrFenced, "the old holder's release is fenced out")
		_, err = e.d.RunRelease(e.ctx, &driver.RunReleaseParams{ID: r.ID + 1000, Fence: 1})
		require.ErrorIs(t, err, driver.ErrNotFound)
		_, err = e.d.RunRelease(e.ctx, &driver.RunReleaseParams{ID: r.ID, Fence: 0})
		requireInputError(t, err, "release under fence 0")
		require.Equal(t, again[0], e.run(r.ID), "refusals change nothing")
	}},
}
