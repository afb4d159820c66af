package scheduler_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/runs"
)

// TestSubscribeWokenByNotifyFromAnotherProcess: two driver instances on one
// schema stand for two processes. Events a worker emits through instance
// A's committer wake a subscriber on instance B's committer — whose poll is
// an hour and whose committer never flushes them — through LISTEN/NOTIFY
// alone, in order, and only once they are durable.
func TestSubscribeWokenByNotifyFromAnotherProcess(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	url, schema := testdb.Schema(t)
	open := func() *postgres.Driver {
		d, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, Logger: quiet})
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
		return d
	}
	a, b := open(), open()
	_, err := a.Migrate(ctx)
	require.NoError(t, err)

	eventsA := scheduler.NewEventCommitter(a, scheduler.EventCommitterConfig{Logger: quiet})
	require.NoError(t, eventsA.Start(context.Background()))
	defer eventsA.Stop(context.Background())
	eventsB := scheduler.NewEventCommitter(b, scheduler.EventCommitterConfig{Logger: quiet})
	require.NoError(t, eventsB.Start(context.Background()))
	defer eventsB.Stop(context.Background())

	enq, err := a.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
	require.NoError(t, err)
	id := enq[0].Run.ID

	const rounds, perRound = 3, 10
	sctx, scancel := context.WithCancel(ctx)
	defer scancel()
	sub := eventsB.Subscribe(sctx, id, 0, 0, time.Hour) // only a notification can wake it

	gate := make(chan struct{})    // lets the handler emit one round
	durable := make(chan int64)    // the handler's last durable seq of the round
	release := make(chan struct{}) // lets the handler finish
	w, err := scheduler.NewWorker(a, eventsA, scheduler.WorkerConfig{Queues: map[string]int{"q": 1}, Logger: quiet})
	require.NoError(t, err)
	w.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
		seq := 0
		for range rounds {
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
			for range perRound {
				seq++
				if err := r.Emit(ctx, "tick", []byte(strconv.Itoa(seq))); err != nil {
					return err
				}
			}
			if err := r.Step(ctx); err != nil { // waits until they are durable
				return err
			}
			durable <- int64(seq)
		}
		<-release
		return nil
	})
	require.NoError(t, w.Start(ctx))

	next := int64(1)
	for range rounds {
		// The subscriber's reads so far found nothing new: it waits on the
		// hour-long poll, the flushes of B (none) and notifications.
		time.Sleep(100 * time.Millisecond)
		select {
		case <-sub:
			t.Fatal("an event before any was emitted")
		default:
		}
		start := time.Now()
		gate <- struct{}{}
		last := <-durable
		for ; next <= last; next++ {
			select {
			case ev := <-sub:
				require.NotNil(t, ev, "subscription closed early")
				require.Equal(t, id, ev.RunID)
				require.Equal(t, next, ev.Seq)
				require.Equal(t, strconv.FormatInt(next, 10), string(ev.Payload))
			case <-time.After(5 * time.Second):
				t.Fatalf("event %d not delivered within 5s of the commit: the notification did not wake the subscriber", next)
			}
		}
		t.Logf("round of %d events delivered across instances in %s", perRound, time.Since(start))
	}
	// What B's subscriber saw is durable: instance B reads it all back from
	// the table on a connection of its own.
	stored, err := b.RunEventList(ctx, &driver.RunEventListParams{RunID: id})
	require.NoError(t, err)
	require.Len(t, stored, rounds*perRound)
	for i, ev := range stored {
		require.Equal(t, int64(i+1), ev.Seq)
	}
	flushes, _ := eventsB.Stats()
	require.Zero(t, flushes, "B's committer flushed: the wake-ups were not notifications")

	close(release)
	require.NoError(t, w.Stop(ctx))
	scancel()
	for range sub { // closed, nothing more
		t.Fatal("an event past the end")
	}
}
