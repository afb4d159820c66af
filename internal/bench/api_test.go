package bench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/runs"
)

// TestAPIWorksEveryRunOnce: the API benchmark, small, on SQLite: every run
// enqueued is completed through the API, none refused, and each endpoint's
// latencies are recorded.
func TestAPIWorksEveryRunOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "b.db")
	d, err := sqlite.Open(ctx, sqlite.Config{Path: path})
	require.NoError(t, err)
	r, err := API(ctx, d, APIConfig{Runs: 300, Workers: 3, ClaimBatch: 50, EnqueueBatch: 70, Renewals: 1})
	require.NoError(t, err)
	require.Zero(t, r.Fenced)
	require.Len(t, r.Latency["POST /v1/runs"], 5)
	require.NotEmpty(t, r.Latency["POST /v1/runs/claim"])
	require.NotEmpty(t, r.Latency["POST /v1/runs/complete"])
	require.Equal(t, 300, r.Renews)
	require.Len(t, r.Latency["POST /v1/runs/{id}/renew"], 300)
	// Read the outcome through a fresh store handle: API closed d.
	d, err = sqlite.Open(ctx, sqlite.Config{Path: path})
	require.NoError(t, err)
	defer d.Close()
	got, err := d.RunList(ctx, &driver.RunListParams{Queue: "bench-api", State: runs.StateCompleted, Limit: 1000})
	require.NoError(t, err)
	require.Len(t, got, 300)
}
