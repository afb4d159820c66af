package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/runs"
)

// TestRunPathWALFrames counts the WAL pages the run path commits per run:
// a claim of a batch (available → running) and its completion in one
// complete-many (running → completed), the shape of `leasehold bench runs`.
// Counted, not timed, so the figure holds on a loaded machine; the bounds
// are loose (page splits come and go) and exist to catch a transition
// that starts touching a new index or rewriting a table.
func TestRunPathWALFrames(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "wal.db")
	d, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, d.Close())
		if dst := os.Getenv("PERF_WAL_DUMP"); dst != "" {
			raw, _ := os.ReadFile(path)
			os.WriteFile(dst, raw, 0o644)
		}
	})
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	noAutoCheckpoint(t, d)
	const frame = walFrame
	const batch, rounds = 100, 20
	es := make([]runs.Enqueue, batch*rounds)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "q", Payload: []byte(`{"n":1}`)}
	}
	_, err = d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
	require.NoError(t, err)
	var claimBytes, completeBytes int64
	for range rounds {
		w0 := walSize(t, path)
		held, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "o", Limit: batch, Lease: runs.MaxLease})
		require.NoError(t, err)
		require.Len(t, held, batch)
		w1 := walSize(t, path)
		p := &driver.RunCompleteManyParams{}
		for _, r := range held {
			p.Runs = append(p.Runs, driver.RunCompletion{ID: r.ID, Fence: r.Fence})
		}
		res, err := d.RunCompleteMany(ctx, p)
		require.NoError(t, err)
		require.Len(t, res.Completed, batch)
		claimBytes += w1 - w0
		completeBytes += walSize(t, path) - w1
		if os.Getenv("PERF_WAL_DUMP") != "" {
			raw, err := os.ReadFile(path + "-wal")
			require.NoError(t, err)
			dump := func(name string, from, to int64) {
				var pages []uint32
				for off := from; off+24 <= to; off += frame {
					h := raw[off : off+24]
					pages = append(pages, uint32(h[0])<<24|uint32(h[1])<<16|uint32(h[2])<<8|uint32(h[3]))
				}
				t.Logf("%s pages: %v", name, pages)
			}
			dump("claim", w0, w1)
			dump("complete", w1, walSize(t, path))
		}
	}
	perRun := func(b int64) float64 { return float64(b) / frame / (batch * rounds) }
	claim, complete := perRun(claimBytes), perRun(completeBytes)
	t.Logf("WAL pages per run (batches of %d): claim %.3f, complete %.3f, both %.3f; per batch: claim %.1f, complete %.1f",
		batch, claim, complete, claim+complete, claim*batch, complete*batch)
	require.Less(t, claim+complete, 0.5, "a batch of 100 rewrites a few leaf pages of the table and of each index it touches")
}
