package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestClaimedRunsReadAsStored: a claim returns claimedColumns and fills
// queue, state, owner and expires_at from its own parameters
// (runScanner.scanClaimed); every claimed run must still equal the run as
// stored (RunGet reads every column), on a plain queue and a limited one,
// including runs that were reclaimed and snoozed before (reason,
// reclaimed_at, snoozes, a second fence and attempt).
func TestClaimedRunsReadAsStored(t *testing.T) {
	for _, limited := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "limited"}[limited]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clk := clock.NewFake(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
			d, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "claim.db"), Clock: clk})
			require.NoError(t, err)
			defer func() { require.NoError(t, d.Close()) }()
			_, err = d.Migrate(ctx)
			require.NoError(t, err)
			if limited {
				_, err = d.QueueSetLimits(ctx, &driver.QueueSetLimitsParams{Queue: "q", MaxRunning: 100})
				require.NoError(t, err)
			}
			es := []runs.Enqueue{
				{Queue: "q", Payload: []byte(`{"a":1}`), Priority: 2, MaxAttempts: 3},
				{Queue: "q", UniqueKey: "k", Priority: 1},
				{Queue: "q"},
				{Queue: "other"}, // not claimed: another queue
			}
			for i := range 5 { // a chunk: runInsertChunkSQL's rows
				es = append(es, runs.Enqueue{Queue: "q", Payload: []byte(`[` + string(rune('0'+i)) + `]`)})
			}
			_, err = d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
			require.NoError(t, err)
			claim := func(owner string, limit int) []*driver.Run {
				t.Helper()
				got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: owner, Limit: limit, Lease: time.Minute})
				require.NoError(t, err)
				return got
			}
			// History: one run reclaimed (reason, reclaimed_at, fence), one snoozed.
			first := claim("w-0", 2)
			require.Len(t, first, 2)
			_, err = d.RunSnooze(ctx, &driver.RunSnoozeParams{ID: first[1].ID, Fence: first[1].Fence, MaxSnoozes: 5})
			require.NoError(t, err)
			clk.Advance(2 * time.Minute)
			rec, err := d.RunReclaim(ctx, &driver.RunReclaimParams{})
			require.NoError(t, err)
			require.Len(t, rec.Reclaimed, 1)
			clk.Advance(time.Second + 1500*time.Nanosecond)

			got := claim("w-1", 100)
			require.Len(t, got, len(es)-1)
			for _, c := range got {
				stored, err := d.RunGet(ctx, &driver.RunGetParams{ID: c.ID})
				require.NoError(t, err)
				require.Equal(t, stored, c, "run %d", c.ID)
				require.Equal(t, "q", c.Queue)
				require.Equal(t, "w-1", c.Owner)
				require.Equal(t, runs.StateRunning, c.State)
			}
			require.Equal(t, first[0].ID, got[0].ID, "claim order: priority first")
			require.Equal(t, 2, got[0].Attempt)
			require.NotZero(t, got[0].ReclaimedAt)
			require.NotEmpty(t, got[0].Reason)
		})
	}
}
