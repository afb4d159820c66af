package postgres

import (
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
	"github.com/leasehold/leasehold/runs"
)

// TestRunEnqueueBatchOrderOnTheRealClock is the conformance case
// RunEnqueueBatchKeepsEveryColumnInInputOrder on the store's real clock
// (clock_timestamp(), read once per statement), which the suite's fake
// StoreClock does not exercise.
func TestRunEnqueueBatchOrderOnTheRealClock(t *testing.T) {
	t.Parallel()
	drivertest.EnqueueInInputOrder(t, open(t, Config{}))
}

// TestRunEnqueueReturnsOnlyWhatTheInsertMade counts what insertRuns sends
// back per run: the id and the two times the statement wrote (43 bytes a
// row), not every column with the payload echoed (141 bytes a row and
// more with the payload). The runs RunEnqueue builds from them keep
// nothing of the caller's: changing the caller's payload bytes afterwards
// changes no run handed out.
func TestRunEnqueueReturnsOnlyWhatTheInsertMade(t *testing.T) {
	t.Parallel()
	d := open(t, Config{})
	ctx := t.Context()

	conn, err := d.s.general.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	const n = 10
	queues, payloads, prios, attempts := make([]string, n), make([][]byte, n), make([]int32, n), make([]int32, n)
	delays := make([]pgtype.Interval, n)
	for i := range n {
		queues[i], payloads[i], attempts[i] = "q", []byte(`{"n":1}`), 25
		delays[i] = pgtype.Interval{Valid: true}
	}
	rows, err := conn.Query(ctx, insertRuns, nil, queues, payloads, prios, attempts, delays)
	require.NoError(t, err)
	wire, got := 0, 0
	for rows.Next() {
		got++
		wire += 7 // a DataRow's type, length and column count
		for _, v := range rows.RawValues() {
			wire += 4 + len(v)
		}
	}
	require.NoError(t, rows.Err())
	require.Len(t, rows.FieldDescriptions(), 3, "id, created_at, scheduled_at")
	require.Equal(t, n, got)
	require.Equal(t, 43*n, wire, "bytes sent back for %d runs", n)

	mine := []byte(`{"k":"v"}`)
	out, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q", Payload: mine}, {Queue: "q", Payload: mine}}})
	require.NoError(t, err)
	copy(mine, `{"k":"w"}`)
	for _, o := range out {
		require.Equal(t, `{"k":"v"}`, string(o.Run.Payload))
		r, err := d.RunGet(ctx, &driver.RunGetParams{ID: o.Run.ID})
		require.NoError(t, err)
		require.Equal(t, r, o.Run, "the run as handed out is the run as stored")
	}
}
