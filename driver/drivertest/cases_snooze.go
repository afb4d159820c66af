package drivertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// Snooze (RunSnooze): a held run goes back to available for a while
// without consuming its attempt, a bounded number of times, fenced like
// a completion.

func (e *env) snooze(r *driver.Run, delay time.Duration, max int) (*driver.Run, error) {
	return e.runStore().RunSnooze(e.ctx, &driver.RunSnoozeParams{ID: r.ID, Fence: r.Fence, Delay: delay, MaxSnoozes: max})
}

var snoozeCases = []Case{
	{"RunSnoozeGivesTheAttemptBackAndReleasesTheLease", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.enqueue(runs.Enqueue{Queue: "q", MaxAttempts: 1})
		r := e.claim("q", "w", 1)[0]
		require.Equal(t, 1, r.Attempt)
		e.h.Clock.Advance(time.Second)
		got, err := e.snooze(r, 10*time.Second, 5)
		require.NoError(t, err)
		require.Equal(t, runs.StateAvailable, got.State)
		require.Zero(t, got.Attempt, "the attempt is given back")
		require.Equal(t, 1, got.Snoozes)
		require.Equal(t, r.Fence, got.Fence, "the next claim moves the fence")
		require.Equal(t, StartTime.Add(11*time.Second), got.ScheduledAt)
		require.Empty(t, got.Owner)
		require.True(t, got.ExpiresAt.IsZero())
		require.Equal(t, got, e.run(r.ID))
		e.requireFencedOut(r.ID, r.Fence, "w")
		require.Empty(t, e.claim("q", "w", 1), "not before the snooze ends")

		e.h.Clock.Advance(10 * time.Second)
		again := e.claim("q", "w2", 1)
		require.Len(t, again, 1)
		require.Equal(t, 1, again[0].Attempt, "the same attempt: a snooze consumed none")
		require.Equal(t, r.Fence+1, again[0].Fence)
		done, err := e.runStore().RunComplete(e.ctx, &driver.RunCompleteParams{ID: r.ID, Fence: again[0].Fence})
		require.NoError(t, err, "a run of one attempt completes after its snooze")
		require.Equal(t, runs.StateCompleted, done.State)
		require.Equal(t, 1, done.Snoozes)
	}},
	{"RunSnoozeIsBoundedAndFenced", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		rs := e.runStore()
		e.enqueue(runs.Enqueue{Queue: "q"})
		r := e.claim("q", "w", 1)[0]
		for i := 1; i <= 2; i++ {
			got, err := e.snooze(r, 0, 2)
			require.NoError(t, err, "snooze %d", i)
			require.Equal(t, i, got.Snoozes)
			_, err = e.snooze(r, 0, 2)
			require.ErrorIs(t, err, driver.ErrFenced, "the snoozed fence is stale")
			r = e.claim("q", "w", 1)[0]
		}
		before := e.run(r.ID)
		_, err := e.snooze(r, 0, 2)
		var lim *driver.SnoozeLimitError
		require.ErrorAs(t, err, &lim)
		require.ErrorIs(t, err, driver.ErrConflict)
		require.Equal(t, driver.SnoozeLimitError{ID: r.ID, Snoozes: 2, Max: 2}, *lim)
		require.Equal(t, before, e.run(r.ID), "a refused snooze changes nothing: still held")
		got, err := e.snooze(r, 0, 3)
		require.NoError(t, err, "a higher bound lets it snooze again")
		require.Equal(t, 3, got.Snoozes)

		r = e.claim("q", "w", 1)[0]
		failed, err := rs.RunFail(e.ctx, &driver.RunFailParams{ID: r.ID, Fence: r.Fence, Reason: "boom", RetryAfter: time.Second})
		require.NoError(t, err)
		require.Equal(t, 1, failed.Attempt, "three snoozes, one attempt consumed")
		_, err = rs.RunSnooze(e.ctx, &driver.RunSnoozeParams{ID: r.ID + 1000, Fence: 1, MaxSnoozes: 5})
		require.ErrorIs(t, err, driver.ErrNotFound)
	}},
	{"RunSnoozeRefusesBadInputChangingNothing", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.enqueue(runs.Enqueue{Queue: "q"})
		r := e.claim("q", "w", 1)[0]
		before := e.run(r.ID)
		for name, p := range map[string]driver.RunSnoozeParams{
			"negative delay":          {ID: r.ID, Fence: r.Fence, Delay: -time.Second, MaxSnoozes: 5},
			"past the max schedule":   {ID: r.ID, Fence: r.Fence, Delay: runs.MaxDelay + time.Microsecond, MaxSnoozes: 5},
			"no bound":                {ID: r.ID, Fence: r.Fence, Delay: time.Second},
			"a negative bound":        {ID: r.ID, Fence: r.Fence, Delay: time.Second, MaxSnoozes: -1},
			"over the limit of bound": {ID: r.ID, Fence: r.Fence, Delay: time.Second, MaxSnoozes: runs.MaxSnoozesLimit + 1},
			"fence 0":                 {ID: r.ID, Delay: time.Second, MaxSnoozes: 5},
			"id 0":                    {Fence: r.Fence, Delay: time.Second, MaxSnoozes: 5},
		} {
			_, err := e.runStore().RunSnooze(e.ctx, &p)
			require.ErrorIs(t, err, driver.ErrInvalid, name)
		}
		require.Equal(t, before, e.run(r.ID))
		got, err := e.snooze(r, runs.MaxDelay, runs.MaxSnoozesLimit)
		require.NoError(t, err, "the bounds themselves are accepted")
		require.Equal(t, StartTime.Add(runs.MaxDelay), got.ScheduledAt)
	}},
}
