package leasehold_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/sqlite"
)

// TestUnknownQueueIsRefusedAndChangesNothing: with Config.Queues set, an
// enqueue naming any other queue is refused with a typed error, and the
// whole batch is left unwritten; a worker for an unknown queue is refused
// too.
func TestUnknownQueueIsRefusedAndChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openSQLite(t, leasehold.Config{Queues: []string{"emails", "billing"}})

	_, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "emails"}, leasehold.Enqueue{Queue: "emials"})
	require.ErrorIs(t, err, leasehold.ErrUnknownQueue)
	require.ErrorIs(t, err, leasehold.ErrInvalid)
	var uq *leasehold.UnknownQueueError
	require.ErrorAs(t, err, &uq)
	require.Equal(t, "emials", uq.Queue)
	require.ErrorContains(t, err, `run 1 of the batch: leasehold: unknown queue "emials" (Config.Queues: emails, billing)`)
	_, err = c.Run(ctx, 1)
	require.ErrorIs(t, err, leasehold.ErrNotFound, "the batch's known run was not written either")

	_, err = c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"billing": 1, "bill": 1}})
	require.ErrorIs(t, err, leasehold.ErrUnknownQueue)

	out, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "billing"})
	require.NoError(t, err)
	require.Equal(t, int64(1), out[0].Run.ID)

	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "x.db")})
	require.NoError(t, err)
	_, err = leasehold.NewClient(ctx, d, leasehold.Config{Queues: []string{"ok", "not a queue!"}})
	require.ErrorIs(t, err, leasehold.ErrInvalid, "a bad name in Config.Queues is refused by NewClient")
	_, err = leasehold.NewClient(ctx, nil, leasehold.Config{})
	require.ErrorIs(t, err, leasehold.ErrInvalid, "no driver")
}

// TestSubscribeFromTheRoot: a run's events reach a root subscriber once
// durable, in order, and Events reads the same back.
func TestSubscribeFromTheRoot(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := openSQLite(t, leasehold.Config{})
	enq, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q"})
	require.NoError(t, err)
	id := enq[0].Run.ID
	sub := c.Subscribe(ctx, id, leasehold.SubscribeOptions{Poll: 10 * time.Millisecond})

	w, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"q": 1}})
	require.NoError(t, err)
	w.Handle("q", func(ctx context.Context, r *leasehold.RunHandle) error {
		for i := range 3 {
			if err := r.Emit(ctx, "step", []byte(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
				return err
			}
		}
		return r.Step(ctx)
	})
	require.NoError(t, w.Start(ctx))
	defer w.Stop(context.Background())
	for i := range 3 {
		select {
		case ev := <-sub:
			require.Equal(t, int64(i+1), ev.Seq)
			require.JSONEq(t, fmt.Sprintf(`{"i":%d}`, i), string(ev.Payload))
		case <-ctx.Done():
			t.Fatal("no event", i)
		}
	}
	evs, err := c.Events(ctx, id, 0, 0, 0)
	require.NoError(t, err)
	require.Len(t, evs, 3)
}
