package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestLimitedClaimExplained is TestRunPathExplained's claim for a queue
// with a concurrency limit (claimRunsControlled under the queue's row
// lock, the path RunClaim takes for it), beside the plain claim of a queue
// without one, on the same table: 10,000 runs in each queue, 800 of each
// held, a batch of 100. What it pins (docs/BENCHMARKS.md): the limited
// claim counts its running runs over runs_running_counted, one index entry
// per held run of its own queue (not the other queue's, not a scan of
// runs), and writes one index entry per run more than the plain claim
// (runs_running_counted); the plain claim writes none there.
func TestLimitedClaimExplained(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(t, Config{})
	noAutovacuum(t, d)
	holdSnapshot(t, d) // the held claims' old versions stay unpruned for both explained claims
	const batch = 100
	for _, q := range []string{"plain", "limited"} {
		es := make([]runs.Enqueue, 10*batch)
		for i := range es {
			es[i] = runs.Enqueue{Queue: q, Payload: []byte(`{"n":1}`)}
		}
		for range 10 {
			_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
			require.NoError(t, err)
		}
	}
	_, err := d.QueueSetLimits(ctx, &driver.QueueSetLimitsParams{Queue: "limited", MaxRunning: 1_000_000})
	require.NoError(t, err)
	for _, q := range []string{"plain", "limited"} {
		got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: q, Owner: "held", Limit: 8 * batch, Lease: 5 * time.Minute})
		require.NoError(t, err)
		require.Len(t, got, 8*batch)
	}
	tx, err := d.s.general.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, "ANALYZE runs")
	require.NoError(t, err)
	qr := pgxQueryRower{q: func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
		return tx.QueryRow(ctx, q, args...)
	}}
	plain := explain(t, ctx, qr, claimRunsPlain, nil, "plain", batch, "o", 5*time.Minute)
	tag, err := tx.Exec(ctx, lockLimitedQueue, "limited")
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected(), "the limited queue's row is locked first")
	limited := explain(t, ctx, qr, claimRunsControlled, nil, "limited", batch, "o", 5*time.Minute)
	var counted int64
	require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE counted) FROM runs WHERE state = 'running' AND queue = 'limited'`).Scan(&counted))
	require.EqualValues(t, 9*batch, counted, "the limited queue's held runs and this batch are counted")
	for _, c := range []struct {
		name string
		e    explained
	}{{"plain claim", plain}, {"limited claim", limited}} {
		t.Logf("%s of %d: %.0f rows of runs read; WAL %.0f records (%.2f per run), %.0f bytes (%.0f per run); buffers hit %.0f, dirtied %.0f; %.2f ms (loaded machine: not a figure)\n  plan: %s",
			c.name, batch, c.e.scanned, c.e.walRecords, c.e.walRecords/batch, c.e.walBytes, c.e.walBytes/batch,
			c.e.hit, c.e.dirtied, c.e.execMs, strings.Join(c.e.nodes, " > "))
		require.NotContains(t, strings.Join(c.e.nodes, ","), "Seq Scan runs", "%s scans the runs table", c.name)
	}
	require.NotContains(t, strings.Join(plain.nodes, ","), "runs_running_counted", "the plain claim counts nothing")
	require.Contains(t, strings.Join(limited.nodes, ","), "runs_running_counted", "the limited claim counts over the counted index")
	// The count reads the limited queue's 800 held runs, then the claim
	// picks and updates its batch: no more than that, whatever the other
	// queue holds.
	require.LessOrEqual(t, limited.scanned, float64(8*batch+3*batch), "the limited claim reads its queue's held runs and its batch")
	extra := (limited.walRecords - plain.walRecords) / batch
	require.InDelta(t, 1.0, extra, 0.25, fmt.Sprintf("the limited claim writes one index entry per run more (runs_running_counted): %.2f", extra))
}
