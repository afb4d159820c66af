package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestRunTransitionsStayOnTheirPage: a run's claim and its completion
// each write their new version on the run's own page, even while a
// snapshot older than the claim is held (as a busy worker's next claim or
// the producer's insert holds one), so that the claim's dead versions
// cannot be pruned before the completion. A new version that does not
// fit makes heap_update write one more row-lock record for the old one
// and go to another page. The claim writes per run its SKIP LOCKED lock,
// the heap update, runs_pkey and runs_expiry: 4 records; the completion
// (no lock of its own, migration 0024) the heap update, runs_pkey and
// runs_finished: 3. With fillfactor 50 (0022) the completion wrote 4.0 —
// its versions went to new pages (migration 0025).
func TestRunTransitionsStayOnTheirPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, url, schema := openIn(t, Config{})
	const batch = 500
	es := make([]runs.Enqueue, batch)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "q", Payload: []byte(`{"n":1}`)}
	}
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
	require.NoError(t, err)

	// A snapshot taken before the claim, held to the end.
	old, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer old.Close(ctx)
	_, err = old.Exec(ctx, "SET search_path = "+pgx.Identifier{schema}.Sanitize())
	require.NoError(t, err)
	otx, err := old.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	require.NoError(t, err)
	defer otx.Rollback(ctx)
	var n int
	require.NoError(t, otx.QueryRow(ctx, "SELECT count(*) FROM runs").Scan(&n))
	require.Equal(t, batch, n)

	inTx := func(f func(qr pgxQueryRower) explained) explained {
		tx, err := d.s.critical.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx)
		e := f(pgxQueryRower{q: func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
			return tx.QueryRow(ctx, q, args...)
		}})
		require.NoError(t, tx.Commit(ctx))
		return e
	}
	claim := inTx(func(qr pgxQueryRower) explained {
		return explain(t, ctx, qr, claimRunsPlain, nil, "q", batch, "o", 5*time.Minute)
	})
	tx, err := d.s.general.Begin(ctx)
	require.NoError(t, err)
	ids, fences := runningIDs(t, tx, `SELECT id, fence FROM runs WHERE state = 'running' ORDER BY id`)
	require.NoError(t, tx.Rollback(ctx))
	require.Len(t, ids, batch)
	complete := inTx(func(qr pgxQueryRower) explained {
		return explain(t, ctx, qr, completeRuns, nil, ids, fences, make([][]byte, batch))
	})
	t.Logf("claim of %d: WAL %.2f records per run, %.0f bytes; completion: %.2f records, %.0f bytes",
		batch, claim.walRecords/batch, claim.walBytes/batch, complete.walRecords/batch, complete.walBytes/batch)
	require.LessOrEqual(t, claim.walRecords/batch, 4.05, "claim WAL records per run")
	require.LessOrEqual(t, complete.walRecords/batch, 3.05, "completion WAL records per run")
}
