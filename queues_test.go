package leasehold_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/runs"
)

// TestQueueControlThroughTheClient: the queue calls' typed refusals and
// what makes a queue known, through the public face.
func TestQueueControlThroughTheClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openSQLite(t, leasehold.Config{})
	_, err := c.PauseQueue(ctx, "emails")
	require.ErrorIs(t, err, leasehold.ErrUnknownQueue)
	require.ErrorIs(t, err, leasehold.ErrInvalid)
	var uq *leasehold.UnknownQueueError
	require.ErrorAs(t, err, &uq)
	require.Equal(t, "emails", uq.Queue)
	require.ErrorContains(t, err, `unknown queue "emails" (the store has no run of it and it was never declared`)
	_, err = c.ResumeQueue(ctx, "emails")
	require.ErrorIs(t, err, leasehold.ErrUnknownQueue)
	qs, err := c.Queues(ctx)
	require.NoError(t, err)
	require.Empty(t, qs, "a refused pause declares nothing")

	_, err = c.Enqueue(ctx, leasehold.Enqueue{Queue: "emails"})
	require.NoError(t, err)
	q, err := c.PauseQueue(ctx, "emails")
	require.NoError(t, err, "known by its run")
	require.True(t, q.Paused)

	for _, bad := range []leasehold.QueueLimits{{MaxRunning: -1}, {RateLimit: 1}, {RatePeriod: time.Second}, {RateLimit: 1, RatePeriod: 48 * time.Hour}} {
		_, err := c.SetQueueLimits(ctx, "emails", bad)
		require.ErrorIs(t, err, leasehold.ErrInvalid, "%+v", bad)
	}
	q, err = c.SetQueueLimits(ctx, "reports", leasehold.QueueLimits{MaxRunning: 2, RateLimit: 10, RatePeriod: time.Minute})
	require.NoError(t, err, "limits declare a queue")
	require.Equal(t, leasehold.QueueLimits{MaxRunning: 2, RateLimit: 10, RatePeriod: time.Minute},
		leasehold.QueueLimits{MaxRunning: q.MaxRunning, RateLimit: q.RateLimit, RatePeriod: q.RatePeriod})
	qs, err = c.Queues(ctx)
	require.NoError(t, err)
	require.Len(t, qs, 2)
	require.Equal(t, "emails", qs[0].Name)
	require.True(t, qs[0].Paused)
	require.Equal(t, map[runs.State]int64{runs.StateAvailable: 1}, qs[0].Counts)
	require.Equal(t, "reports", qs[1].Name)

	// With Config.Queues, a listed queue may be paused before its first
	// run, and any other is refused before the store is asked.
	c2 := openSQLite(t, leasehold.Config{Queues: []string{"billing"}})
	q, err = c2.PauseQueue(ctx, "billing")
	require.NoError(t, err)
	require.True(t, q.Paused)
	_, err = c2.PauseQueue(ctx, "bill")
	require.ErrorAs(t, err, &uq)
	require.Equal(t, []string{"billing"}, uq.Known)
	_, err = c2.SetQueueLimits(ctx, "bill", leasehold.QueueLimits{MaxRunning: 1})
	require.ErrorIs(t, err, leasehold.ErrUnknownQueue)
}
