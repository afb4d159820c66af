package leasehold_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// TestCleanerConfigIsValidated: a negative or absurd retention, a
// negative interval or batch are refused at NewClient, typed, naming the
// field; 0 (keep forever) is accepted.
func TestCleanerConfigIsValidated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg   leasehold.Config
		field string
	}{
		{leasehold.Config{Retention: &leasehold.Retention{Completed: -time.Hour}}, "retention.completed"},
		{leasehold.Config{Retention: &leasehold.Retention{Failed: runs.MaxRetention + time.Hour}}, "retention.failed"},
		{leasehold.Config{Retention: &leasehold.Retention{Cancelled: -1}}, "retention.cancelled"},
		{leasehold.Config{CleanerInterval: -time.Second}, "cleaner_interval"},
		{leasehold.Config{CleanerBatch: -1}, "cleaner_batch"},
		{leasehold.Config{CleanerBatch: 1 << 30}, "cleaner_batch"},
	} {
		err := c.cfg.Validate()
		require.ErrorIs(t, err, leasehold.ErrInvalid, c.field)
		var ie *journal.InputError
		require.True(t, errors.As(err, &ie), c.field)
		require.Equal(t, c.field, ie.Field)
	}
	require.NoError(t, leasehold.Config{Retention: &leasehold.Retention{}}.Validate(), "0 keeps forever")
	require.Equal(t, leasehold.Retention{Completed: 24 * time.Hour, Failed: 7 * 24 * time.Hour, Cancelled: 7 * 24 * time.Hour},
		leasehold.DefaultRetention())
}

// TestCleanerDeletesFinishedRunsPastRetention: on both stores, the
// started cleaner deletes completed runs past a short retention and keeps
// failed ones (retention 0: forever) and queued ones.
func TestCleanerDeletesFinishedRunsPastRetention(t *testing.T) {
	t.Parallel()
	for _, s := range hostileClients {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, err := leasehold.NewClient(ctx, s.open(t), leasehold.Config{Logger: slog.New(slog.DiscardHandler),
				Retention: &leasehold.Retention{Completed: time.Millisecond}, CleanerInterval: 5 * time.Millisecond, CleanerBatch: 2})
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			w, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"q": 4}, ClockCheck: -1, FetchInterval: 5 * time.Millisecond})
			require.NoError(t, err)
			w.Handle("q", func(_ context.Context, r *leasehold.RunHandle) error {
				if string(r.Payload) == `"fail"` {
					return errors.New("boom")
				}
				return nil
			})
			var ids []int64
			for _, p := range []string{`"ok"`, `"ok"`, `"ok"`, `"ok"`, `"ok"`, `"fail"`} {
				out, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q", Payload: []byte(p), MaxAttempts: 1})
				require.NoError(t, err)
				ids = append(ids, out[0].Run.ID)
			}
			queued, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "later", Payload: []byte(`{}`)})
			require.NoError(t, err)
			require.NoError(t, w.Start(ctx))
			t.Cleanup(func() { _ = w.Stop(ctx) })
			for _, id := range ids {
				settled(t, c, id, func(r *leasehold.Run) bool { return r.State.Final() })
			}
			require.NoError(t, c.StartCleaner(ctx))
			require.Eventually(t, func() bool {
				for _, id := range ids[:5] {
					if _, err := c.Run(ctx, id); !errors.Is(err, leasehold.ErrNotFound) {
						return false
					}
				}
				return true
			}, 20*time.Second, 5*time.Millisecond, "every completed run deleted")
			failed, err := c.Run(ctx, ids[5])
			require.NoError(t, err, "failed runs are kept: retention 0")
			require.Equal(t, runs.StateFailed, failed.State)
			_, err = c.Run(ctx, queued[0].Run.ID)
			require.NoError(t, err, "queued runs are never deleted")
		})
	}
}
