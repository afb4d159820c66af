package postgres

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// TestRunReasonWithNUL (fixed; was found by fuzzing): runs.ValidateReason accepted any valid UTF-8, NUL
// included, but a Postgres text column cannot hold a NUL byte, so a
// runner's Fail (likewise Block, Cancel) whose reason carries one — an
// error message quoting binary data, say — fails with a raw server error
// instead of lease.ErrInvalid, after passing validation, and the run stays
// running until its lease expires. SQLite stores the same reason. Either
// ValidateReason refuses NUL for both drivers, or Postgres stores it
// escaped.
func TestRunReasonWithNUL(t *testing.T) {
	t.Parallel()
	d, _ := openRuns(t, Config{})
	ctx := context.Background()
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", MaxAttempts: 1}}})
	require.NoError(t, err)
	got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "w", Limit: 1, Lease: runTerm})
	require.NoError(t, err)
	require.Len(t, got, 1)

	reason := "decode failed at \x00"
	require.ErrorIs(t, runs.ValidateReason(reason), lease.ErrInvalid)
	_, err = d.RunFail(ctx, &driver.RunFailParams{ID: got[0].ID, Fence: got[0].Fence, Reason: reason})
	require.ErrorIs(t, err, lease.ErrInvalid, "refused as invalid input, nothing written")
	r, err := d.RunGet(ctx, &driver.RunGetParams{ID: got[0].ID})
	require.NoError(t, err)
	require.Equal(t, runs.StateRunning, r.State)
}
