package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// TestQueuesAndRunsCommands: `queues ls|pause|resume|limit` and `runs ls`
// on an embedded store, text and --json, and their typed refusals.
func TestQueuesAndRunsCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "lh.db")
	d, err := sqlite.Open(ctx, sqlite.Config{Path: db})
	require.NoError(t, err)
	c, err := leasehold.NewClient(ctx, d, leasehold.Config{})
	require.NoError(t, err)
	_, err = c.Enqueue(ctx, leasehold.Enqueue{Queue: "emails", Payload: []byte(`{"to":"a"}`)},
		leasehold.Enqueue{Queue: "emails"}, leasehold.Enqueue{Queue: "reports"})
	require.NoError(t, err)
	_, err = c.Cancel(ctx, 2, "not needed")
	require.NoError(t, err)
	require.NoError(t, c.Close())
	run := func(want int, args ...string) string {
		t.Helper()
		out, code := cli(t, append(args, "--db", db)...)
		require.Equal(t, want, code, out)
		return out
	}
	require.Contains(t, run(0, "queues"), "available 1, cancelled 1")
	require.Contains(t, run(exitNotFound, "queues", "pause", "nope"), `unknown queue "nope"`)
	require.Contains(t, run(exitUsage, "queues", "pause"), "needs a QUEUE")
	require.Contains(t, run(0, "queues", "pause", "emails"), "queue emails paused at ")
	require.Contains(t, run(0, "queues", "ls"), "PAUSED")
	require.Contains(t, run(0, "queues", "limit", "reports", "--max-running", "2", "--rate", "5", "--per", "1s"),
		"queue reports: at most 2 running, at most 5 starts per 1s")
	require.Contains(t, run(exitUsage, "queues", "limit", "reports", "--max-running", "-1"), "max_running")
	require.Contains(t, run(exitUsage, "queues", "limit", "reports", "--rate", "5"), "rate_period")
	var qs []queueJSON
	require.NoError(t, json.Unmarshal([]byte(run(0, "queues", "ls", "--json")), &qs))
	require.Len(t, qs, 2)
	require.Equal(t, queueJSON{Name: "emails", Paused: true, Counts: map[string]int64{"available": 1, "cancelled": 1},
		CreatedAt: qs[0].CreatedAt, UpdatedAt: qs[0].UpdatedAt}, qs[0])
	require.NotNil(t, qs[0].CreatedAt)
	require.Equal(t, 2, qs[1].MaxRunning)
	require.Equal(t, int64(1000), qs[1].RatePeriodMS)
	require.Contains(t, run(0, "queues", "resume", "emails"), "queue emails resumed at ")
	require.Contains(t, run(0, "queues"), "emails                   active")

	require.Contains(t, run(0, "runs", "ls", "--queue", "emails", "--state", "cancelled"), "not needed")
	var rs []runJSON
	require.NoError(t, json.Unmarshal([]byte(run(0, "runs", "--queue", "emails", "--json")), &rs))
	require.Len(t, rs, 2)
	require.JSONEq(t, `{"to":"a"}`, string(rs[0].Payload))
	require.Equal(t, "cancelled", rs[1].State)
	require.NotNil(t, rs[1].FinishedAt)
	require.NoError(t, json.Unmarshal([]byte(run(0, "runs", "--after", "1", "--limit", "1", "--json")), &rs))
	require.Equal(t, int64(2), rs[0].ID)
	require.Len(t, rs, 1)
	require.Contains(t, run(0, "runs", "--state", "running"), "no runs")
	require.Contains(t, run(exitUsage, "runs", "--state", "sleeping"), "invalid")
	require.Contains(t, run(exitUsage, "runs", "show"), "needs one run ID")
	require.Contains(t, run(exitUsage, "runs", "frobnicate"), "unknown command")
}
