package drivertest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// runCountsCase: RunCounts counts every run once, by queue and state,
// ordered by queue then state, and follows a claim and a completion.
var runCountsCase = Case{"RunCountsByQueueAndState", func(t *testing.T, f Factory) {
	e := newEnv(t, f)
	cs, err := e.d.RunCounts(e.ctx)
	require.NoError(t, err)
	require.Empty(t, cs, "an empty store counts nothing")
	for _, q := range []string{"b", "a", "b", "a", "a"} {
		e.enqueue(runs.Enqueue{Queue: q})
	}
	claimed := e.claim("a", "o", 2)
	require.Len(t, claimed, 2)
	_, err = e.d.RunComplete(e.ctx, &driver.RunCompleteParams{ID: claimed[0].ID, Fence: claimed[0].Fence})
	require.NoError(t, err)
	cs, err = e.d.RunCounts(e.ctx)
	require.NoError(t, err)
	require.Equal(t, []driver.RunCount{
		{Queue: "a", State: runs.StateAvailable, N: 1},
		{Queue: "a", State: runs.StateCompleted, N: 1},
		{Queue: "a", State: runs.StateRunning, N: 1},
		{Queue: "b", State: runs.StateAvailable, N: 2},
	}, cs)
}}
