package drivertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// retryCases hold RunRetry to its contract on every driver: River's
// JobRetry for a failed or cancelled run, refused (typed) otherwise.
var retryCases = []Case{
	{"RunRetryGivesAFailedRunOneMoreAttempt", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		e.enqueue(runs.Enqueue{Queue: "q", MaxAttempts: 1})
		r := e.claim("q", "w", 1)[0]
		failed, err := rs.RunFail(e.ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, Reason: "boom"})
		require.NoError(t, err)
		require.Equal(t, runs.StateFailed, failed.State, "one attempt, spent")

		got, err := rs.RunRetry(e.ctx, &driver.RunRetryParams{ID: r.ID, Fence: failed.Fence})
		require.NoError(t, err)
		require.Equal(t, runs.StateAvailable, got.State)
		require.Equal(t, 1, got.Attempt, "the attempts used stay counted")
		require.Equal(t, 2, got.MaxAttempts, "the budget grows by the one attempt the retry gives")
		require.True(t, got.FinishedAt.IsZero())
		require.Equal(t, failed.Fence, got.Fence)

		_, err = rs.RunRetry(e.ctx, &driver.RunRetryParams{ID: r.ID})
		require.ErrorIs(t, err, driver.ErrConflict, "an available run is not retried again")
		again := e.claim("q", "w2", 1)
		require.Len(t, again, 1, "the retried run is due at once")
		require.Equal(t, 2, again[0].Attempt)
		require.Greater(t, again[0].Fence, got.Fence)
		_, err = rs.RunRetry(e.ctx, &driver.RunRetryParams{ID: r.ID})
		require.ErrorIs(t, err, driver.ErrConflict, "a running run is not retried")
		_, err = rs.RunRetry(e.ctx, &driver.RunRetryParams{ID: r.ID + 1000})
		require.ErrorIs(t, err, driver.ErrNotFound)
	}},
	{"RunRetryOfACancelledRunIsFencedByWhatTheCallerSaw", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		e.enqueue(runs.Enqueue{Queue: "q", MaxAttempts: 5})
		r := e.claim("q", "w", 1)[0]
		c, err := rs.RunCancel(e.ctx, &driver.RunCancelParams{ID: r.ID, Reason: "op"})
		require.NoError(t, err)

		_, err = rs.RunRetry(e.ctx, &driver.RunRetryParams{ID: r.ID, Fence: r.Fence})
		require.ErrorIs(t, err, driver.ErrFenced, "the caller saw the run before the cancel moved its fence")
		got, err := rs.RunRetry(e.ctx, &driver.RunRetryParams{ID: r.ID, Fence: c.Fence})
		require.NoError(t, err)
		require.Equal(t, runs.StateAvailable, got.State)
		require.Equal(t, 5, got.MaxAttempts, "a budget not spent is kept as it is")
		e.requireFencedOut(r.ID, r.Fence, "w")

		done := e.claim("q", "w2", 1)[0]
		_, err = rs.RunComplete(e.ctx, &driver.RunCompleteParams{ID: done.ID, Fence: done.Fence})
		require.NoError(t, err)
		_, err = rs.RunRetry(e.ctx, &driver.RunRetryParams{ID: r.ID})
		require.ErrorIs(t, err, driver.ErrConflict, "a completed run is not retried")
	}},
}
