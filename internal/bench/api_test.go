package bench

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/runs"
)

// TestAPIWorksEveryRunOnce: the API benchmark, small, on SQLite: every run
// enqueued is completed through the API, none refused, and each endpoint's
// latencies are recorded.
func TestAPIWorksEveryRunOnce(t *testing.T) {
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "b.db")})
	require.NoError(t, err)
	c, err := leasehold.NewClient(ctx, d, leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer c.Close()
	r, err := API(ctx, c, APIConfig{Runs: 300, Workers: 3, ClaimBatch: 50, EnqueueBatch: 70})
	require.NoError(t, err)
	require.Zero(t, r.Fenced)
	require.Len(t, r.Latency["POST /v1/runs"], 5)
	require.NotEmpty(t, r.Latency["POST /v1/runs/claim"])
	require.NotEmpty(t, r.Latency["POST /v1/runs/complete"])
	got, err := c.Driver().RunList(ctx, &driver.RunListParams{Queue: "bench-api", State: runs.StateCompleted, Limit: 1000})
	require.NoError(t, err)
	require.Len(t, got, 300)
}
