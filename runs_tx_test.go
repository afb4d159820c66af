package leasehold_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/runs"
)

// TestEnqueueTxCommitIsClaimedRollbackLeavesNothing: on both stores, an
// order row and its run written in one caller's transaction — rolled
// back, neither exists and no worker ever sees the run; committed, both
// exist and a worker claims and completes the run.
func TestEnqueueTxCommitIsClaimedRollbackLeavesNothing(t *testing.T) {
	t.Parallel()
	for _, k := range hostileClients {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			d := k.open(t)
			c, err := leasehold.NewClient(ctx, d, leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			execOn(t, d, `CREATE TABLE orders (id INTEGER PRIMARY KEY)`)

			tx, err := beginCallerTx(ctx, d)
			require.NoError(t, err)
			require.NoError(t, tx.exec(ctx, `INSERT INTO orders (id) VALUES (1)`))
			gone, err := c.EnqueueTx(ctx, tx.tx, leasehold.Enqueue{Queue: "ship", Payload: []byte(`{"order":1}`)})
			require.NoError(t, err)
			require.NoError(t, tx.rollback(ctx))
			_, err = c.Run(ctx, gone[0].Run.ID)
			require.ErrorIs(t, err, leasehold.ErrNotFound, "a rolled-back run does not exist")

			tx, err = beginCallerTx(ctx, d)
			require.NoError(t, err)
			require.NoError(t, tx.exec(ctx, `INSERT INTO orders (id) VALUES (2)`))
			kept, err := c.EnqueueTx(ctx, tx.tx, leasehold.Enqueue{Queue: "ship", Payload: []byte(`{"order":2}`)})
			require.NoError(t, err)
			require.NoError(t, tx.commit(ctx))

			worked := make(chan int64, 2)
			w, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"ship": 1}, ClockCheck: -1,
				FetchInterval: 5 * time.Millisecond})
			require.NoError(t, err)
			w.Handle("ship", func(_ context.Context, r *leasehold.RunHandle) error {
				worked <- r.ID
				return nil
			})
			require.NoError(t, w.Start(ctx))
			t.Cleanup(func() { _ = w.Stop(ctx) })
			require.Equal(t, kept[0].Run.ID, <-worked, "the committed run is claimed")
			require.Eventually(t, func() bool {
				r, err := c.Run(ctx, kept[0].Run.ID)
				return err == nil && r.State == runs.StateCompleted
			}, 10*time.Second, 5*time.Millisecond)
			require.NoError(t, w.Stop(ctx))
			require.Empty(t, worked, "only the committed run was ever claimed")
			require.Equal(t, 1, countOn(t, d, `SELECT count(*) FROM runs`))
			require.Equal(t, 1, countOn(t, d, `SELECT count(*) FROM orders WHERE id = 2`))
			require.Equal(t, 1, countOn(t, d, `SELECT count(*) FROM orders`))
		})
	}
}

// TestEnqueueTxBadInputIsTypedAndChangesNothing: every refusal matches a
// sentinel, writes nothing, and leaves the caller's transaction usable.
func TestEnqueueTxBadInputIsTypedAndChangesNothing(t *testing.T) {
	t.Parallel()
	for _, k := range hostileClients {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			d := k.open(t)
			c, err := leasehold.NewClient(ctx, d, leasehold.Config{Queues: []string{"ship"}, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			execOn(t, d, `CREATE TABLE orders (id INTEGER PRIMARY KEY)`)
			tx, err := beginCallerTx(ctx, d)
			require.NoError(t, err)
			require.NoError(t, tx.exec(ctx, `INSERT INTO orders (id) VALUES (1)`))
			ok := leasehold.Enqueue{Queue: "ship"}
			for name, call := range map[string]struct {
				tx   any
				runs []leasehold.Enqueue
				want error
			}{
				"unknown queue":   {tx.tx, []leasehold.Enqueue{ok, {Queue: "other"}}, leasehold.ErrUnknownQueue},
				"bad payload":     {tx.tx, []leasehold.Enqueue{ok, {Queue: "ship", Payload: []byte(`{"a":`)}}, leasehold.ErrInvalid},
				"negative delay":  {tx.tx, []leasehold.Enqueue{{Queue: "ship", Delay: -time.Second}}, leasehold.ErrInvalid},
				"no transaction":  {nil, []leasehold.Enqueue{ok}, leasehold.ErrInvalid},
				"not a tx":        {"tx", []leasehold.Enqueue{ok}, leasehold.ErrInvalid},
				"a client, no tx": {c, []leasehold.Enqueue{ok}, leasehold.ErrInvalid},
			} {
				_, err := c.EnqueueTx(ctx, call.tx, call.runs...)
				require.ErrorIs(t, err, call.want, name)
			}
			require.NoError(t, tx.commit(ctx), "the refusals left the transaction usable")
			_, err = c.EnqueueTx(ctx, tx.tx, ok)
			require.ErrorIs(t, err, leasehold.ErrInvalid, "a committed transaction")
			require.Zero(t, countOn(t, d, `SELECT count(*) FROM runs`))
			require.Equal(t, 1, countOn(t, d, `SELECT count(*) FROM orders`))
		})
	}
}
