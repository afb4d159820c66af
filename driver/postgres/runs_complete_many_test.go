package postgres

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestRunCompleteManyOverlappingBatchesNeverDeadlock sends two batches
// completing the same runs in opposite orders at once (a stale duplicate
// of a batch completer's flush, say). Locking in the batch's order, each
// would hold the runs the other waits for; completeRuns locks in id order,
// so one batch waits behind the other and finds those runs completed. Each
// run is completed exactly once, by one of the two.
func TestRunCompleteManyOverlappingBatchesNeverDeadlock(t *testing.T) {
	t.Parallel()
	d, _ := openRuns(t, Config{CriticalConns: 4})
	ctx := context.Background()
	for range 3 {
		es := make([]runs.Enqueue, runs.MaxClaimBatch)
		for i := range es {
			es[i] = runs.Enqueue{Queue: "q"}
		}
		_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
		require.NoError(t, err)
		held, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "w", Limit: len(es), Lease: runTerm})
		require.NoError(t, err)
		require.Len(t, held, len(es))
		up := make([]driver.RunCompletion, len(held))
		for i, r := range held {
			up[i] = driver.RunCompletion{ID: r.ID, Fence: r.Fence}
		}
		down := slices.Clone(up)
		slices.Reverse(down)

		start := make(chan struct{})
		res := make([]*driver.RunCompleteManyResult, 2)
		var wg sync.WaitGroup
		for i, batch := range [][]driver.RunCompletion{up, down} {
			wg.Go(func() {
				<-start
				out, err := d.RunCompleteMany(ctx, &driver.RunCompleteManyParams{Runs: batch})
				if assert.NoError(t, err) { // a deadlock aborts one batch with 40P01
					res[i] = out
				}
			})
		}
		close(start)
		wg.Wait()
		require.False(t, t.Failed())
		require.Len(t, res[0].Completed, len(held)-len(res[0].Fenced))
		require.Len(t, res[1].Completed, len(held)-len(res[1].Fenced))
		completed := slices.Concat(res[0].Completed, res[1].Completed)
		slices.Sort(completed)
		want := make([]int64, len(held))
		for i, r := range held {
			want[i] = r.ID
		}
		slices.Sort(want)
		require.Equal(t, want, completed, "each run completed once, by one batch")
	}
}
