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

// TestQueueEventsWaitForOlderTransactions: an event committed while an
// older transaction is still open is not listed for its queue until that
// transaction ends — the older one may still commit events that sort
// before it (migration 0016), and a reader's cursor must never pass them.
// Deterministic: the open transaction took its xid before the append, so
// it holds the snapshot's xmin at or below it for as long as it is open.
func TestQueueEventsWaitForOlderTransactions(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound, not a timing guess
	defer cancel()
	d := open(t, Config{})
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
	require.NoError(t, err)
	held, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "w", Limit: 1, Lease: time.Minute})
	require.NoError(t, err)
	r := held[0]

	older, err := d.BeginTx(ctx, pgx.TxOptions{})
	require.NoError(t, err)
	defer older.Rollback(ctx)
	_, err = older.Exec(ctx, `SELECT pg_current_xact_id()`) // takes its xid now, before the append's
	require.NoError(t, err)

	_, err = d.RunEventAppend(ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{
		{RunID: r.ID, Fence: r.Fence, Seq: 1, Kind: "k", Payload: []byte(`{}`)}}})
	require.NoError(t, err)
	list := func() []*driver.QueueEvent {
		page, err := d.RunEventListQueue(ctx, &driver.RunEventListQueueParams{Queue: "q"})
		require.NoError(t, err)
		require.Equal(t, len(page.Events) == 0, page.Pending, "an event is listed or pending")
		return page.Events
	}
	evs, err := d.RunEventList(ctx, &driver.RunEventListParams{RunID: r.ID})
	require.NoError(t, err)
	require.Len(t, evs, 1, "committed: the run's own list has it")
	require.Empty(t, list(), "held back (pending) while an older transaction is open")

	require.NoError(t, older.Commit(ctx))
	for { // other sessions of the shared cluster may hold it back a moment longer
		if got := list(); len(got) == 1 {
			require.Equal(t, r.ID, got[0].RunID)
			return
		}
		require.NoError(t, ctx.Err(), "never listed after the older transaction ended")
		time.Sleep(5 * time.Millisecond) // bounded polling of a condition
	}
}
