package postgres

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestClaimFreshRunsCost is a measurement, not a check (it runs only with
// LEASEHOLD_MEASURE=1): a claim of a queue fed as the mixed bench feeds it
// (batches of 100 enqueued while claims of k take them), under EXPLAIN
// (ANALYZE, BUFFERS, WAL) in autocommit as the driver sends it: buffers
// and WAL per claimed run, for claims that find k = 1, 10 and 100 runs.
func TestClaimFreshRunsCost(t *testing.T) {
	if os.Getenv("LEASEHOLD_MEASURE") == "" {
		t.Skip("a measurement: LEASEHOLD_MEASURE=1")
	}
	d := open(t, Config{})
	ctx := t.Context()
	conn, err := d.s.general.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	qr := pgxQueryRower{q: func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
		return conn.QueryRow(ctx, q, args...)
	}}
	batch := make([]runs.Enqueue, 100)
	for i := range batch {
		batch[i] = runs.Enqueue{Queue: "mixed"}
	}
	for _, k := range []int{1, 10, 100} {
		var claimed, bufs, scanned, walRecs, walBytes, claims float64
		for range 20 {
			_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: batch})
			require.NoError(t, err)
			for got := 0; got < 100; got += k {
				e := explain(t, ctx, qr, claimRunsPlain, nil, "mixed", k, "o", 5*time.Minute)
				claimed += float64(k)
				claims++
				bufs += e.hit + e.read
				scanned += e.scanned
				walRecs += e.walRecords
				walBytes += e.walBytes
			}
		}
		if k == 1 {
			var plan string
			rows, err := conn.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, WAL, COSTS OFF, TIMING OFF) "+claimRunsPlain, nil, "mixed", 1, "o", 5*time.Minute)
			require.NoError(t, err)
			for rows.Next() {
				require.NoError(t, rows.Scan(&plan))
				t.Log(plan)
			}
		}
		t.Logf("claims of %d: per claimed run %.1f buffers, %.1f rows scanned, %.2f WAL records, %.0f WAL bytes (%.0f claims)",
			k, bufs/claimed, scanned/claimed, walRecs/claimed, walBytes/claimed, claims)
	}
}
