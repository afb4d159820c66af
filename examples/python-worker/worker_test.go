// Package pythonworker_test runs the Python example worker against the
// real `leasehold serve`.
package pythonworker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/servetest"
	"github.com/leasehold/leasehold/remote"
	"github.com/leasehold/leasehold/runs"
)

// python3 finds the interpreter; without one the test is skipped loudly,
// except in CI, where it fails.
func python3(t *testing.T) string {
	p, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is required in CI for the Python example worker")
		}
		t.Skip("SKIPPED LOUDLY: python3 is not installed; the Python example worker was not run")
	}
	return p
}

// TestPythonWorkerCompletesRuns (must-show 3): `leasehold serve` on a
// fresh SQLite file and a free loopback port; 25 runs enqueued; the Python
// worker (standard library only) claims them in batches, emits an event,
// makes its effect through the ledger and completes them with
// complete-many; after the server stopped, the store shows every run
// completed with its result, its effect committed and its event stored.
func TestPythonWorkerCompletesRuns(t *testing.T) {
	t.Parallel()
	py := python3(t)
	db := filepath.Join(t.TempDir(), "lh.db")
	srv := servetest.Start(t, "--db", db)
	ctx := context.Background()
	const n = 25
	require.NotEmpty(t, srv.Token, "the first start minted an admin token")
	c := remote.New(srv.URL, remote.WithToken(srv.Token))
	var items []remote.Enqueue
	for i := 1; i <= n; i++ {
		items = append(items, remote.Enqueue{Queue: "squares", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
	}
	enq, err := c.Enqueue(ctx, items...)
	require.NoError(t, err)
	require.Len(t, enq, n)

	pctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a bound, not a timing guess
	defer cancel()
	cmd := exec.CommandContext(pctx, py, "worker.py", "--url", srv.URL, "--queue", "squares", "--owner", "py-1", "--batch", "7", "--max-runs", fmt.Sprint(n), "--token", srv.Token)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), fmt.Sprintf("done: %d runs completed by py-1", n))
	srv.Stop(t)

	d, err := sqlite.Open(ctx, sqlite.Config{Path: db})
	require.NoError(t, err)
	lc, err := leasehold.NewClient(ctx, d, leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer lc.Close()
	for i, e := range enq {
		r, err := lc.Run(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, runs.StateCompleted, r.State, "run %d: %s", r.ID, r.Reason)
		require.JSONEq(t, fmt.Sprintf(`{"square":%d,"receipt":"%d:notify@%d"}`, (i+1)*(i+1), r.ID, r.Fence), string(r.Result))
		evs, err := lc.Events(ctx, r.ID, 0, 0, 0)
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.JSONEq(t, `{"by":"py-1"}`, string(evs[0].Payload))
		effs, err := lc.Driver().RunEffectList(ctx, &driver.RunEffectListParams{RunID: r.ID})
		require.NoError(t, err)
		require.Len(t, effs, 1)
		require.True(t, effs[0].Committed)
	}
}
