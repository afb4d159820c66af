package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestCompleteRunsLockInIdOrder: the batched completion locks the rows it
// writes in id order, as the renewal drain and a run event batch do, so
// it cannot deadlock with them. Run a's newest version lies after run b's
// in the table (a was rewritten after the claim), so a sequential or
// bitmap scan would reach b first. A locker in id order holds a (FOR
// SHARE, as an event batch holds its runs) while the completion of {b, a}
// waits for it: the completion must hold nothing yet, so the locker can
// go on to take b. A completion that updated b before it waited for a
// would hold b, and the locker would wait for it in turn: a deadlock the
// server breaks after deadlock_timeout. (Migration 0024: the completion
// took no lock of its own, in a plan the planner chose; before it, a
// locking CTE ordered by id, one row-lock WAL record per run.)
func TestCompleteRunsLockInIdOrder(t *testing.T) {
	t.Parallel()
	// complete completes runs a and b (a.ID < b.ID) with the batch {b, a}.
	type completeFunc func(ctx context.Context, t *testing.T, d *Driver, url, schema string, a, b driver.Run) error
	viaDriver := func(ctx context.Context, t *testing.T, d *Driver, url, schema string, a, b driver.Run) error {
		res, err := d.RunCompleteMany(ctx, &driver.RunCompleteManyParams{Runs: []driver.RunCompletion{
			{ID: b.ID, Fence: b.Fence}, {ID: a.ID, Fence: a.Fence}}})
		if err == nil && len(res.Completed) != 2 {
			err = fmt.Errorf("completed %v, fenced %v", res.Completed, res.Fenced)
		}
		return err
	}
	// With index scans off on the session (or role, or database) every
	// path was disabled and the planner went back to a Seq Scan, in the
	// table's order: the function's own SET turns them on (review).
	indexScansOff := func(ctx context.Context, t *testing.T, d *Driver, url, schema string, a, b driver.Run) error {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "SET search_path = "+pgx.Identifier{schema}.Sanitize()+"; SET enable_indexscan = off"); err != nil {
			return err
		}
		var n int
		err = conn.QueryRow(ctx, "SELECT count(*) FROM leasehold_complete_runs($1, $2, $3, NULL)",
			[]int64{a.ID, b.ID}, []int64{a.Fence, b.Fence}, [][]byte{nil, nil}).Scan(&n)
		if err == nil && n != 2 {
			err = fmt.Errorf("completed %d of 2", n)
		}
		return err
	}
	for _, c := range []struct {
		name     string
		complete completeFunc
	}{{"driver", viaDriver}, {"index scans off on the session", indexScansOff}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lockOrder(t, c.complete)
		})
	}
}

func lockOrder(t *testing.T, complete func(ctx context.Context, t *testing.T, d *Driver, url, schema string, a, b driver.Run) error) {
	ctx := context.Background()
	d, url, schema := openIn(t, Config{})
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}, {Queue: "q"}}})
	require.NoError(t, err)
	got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "o", Limit: 2, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, got, 2)
	a, b := got[0], got[1]
	require.Less(t, a.ID, b.ID)
	// A HOT update of a column no index reads: a's new version goes after
	// b's on the page.
	_, err = d.s.general.Exec(ctx, "UPDATE runs SET reason = 'moved' WHERE id = $1", a.ID)
	require.NoError(t, err)
	var physical []int64
	rows, err := d.s.general.Query(ctx, "SELECT id FROM runs ORDER BY ctid")
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		physical = append(physical, id)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []int64{b.ID, a.ID}, physical, "the table's order is not the ids'")

	tx, lockerPID := holdLock(t, url, schema, "SELECT 1 FROM runs WHERE id = $1 FOR SHARE", a.ID)
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		done <- complete(ctx, t, d, url, schema, *a, *b)
	}()
	waitBlockedBy(t, url, lockerPID, "the completion")
	// The locker takes b, the next in id order, without waiting: the
	// completion holds no row.
	_, err = tx.Exec(ctx, "SELECT 1 FROM runs WHERE id = $1 FOR SHARE NOWAIT", b.ID)
	require.NoError(t, err, "the completion holds run %d while it waits for run %d", b.ID, a.ID)
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, <-done)
}
