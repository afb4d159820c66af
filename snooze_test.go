package leasehold_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/internal/hostile"
	"github.com/leasehold/leasehold/runs"
)

// snoozeClient is a client over a fresh store of kind k, and a started
// worker of queue "q" running h, both stopped when the test ends.
func snoozeClient(t *testing.T, k int, cfg leasehold.WorkerConfig, h leasehold.Handler) *leasehold.Client {
	t.Helper()
	ctx := context.Background()
	c, err := leasehold.NewClient(ctx, hostileClients[k].open(t), leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	cfg.Queues, cfg.ClockCheck, cfg.FetchInterval = map[string]int{"q": 4}, -1, 5*time.Millisecond
	w, err := c.NewWorker(cfg)
	require.NoError(t, err)
	w.Handle("q", h)
	require.NoError(t, w.Start(ctx))
	t.Cleanup(func() { _ = w.Stop(ctx) })
	return c
}

// settled waits until run id is out of running (its final write landed)
// and satisfies done.
func settled(t *testing.T, c *leasehold.Client, id int64, done func(*leasehold.Run) bool) *leasehold.Run {
	t.Helper()
	var r *leasehold.Run
	require.Eventually(t, func() bool {
		var err error
		r, err = c.Run(context.Background(), id)
		return err == nil && r.State != runs.StateRunning && done(r)
	}, 20*time.Second, 5*time.Millisecond, "run %d: %+v", id, r)
	return r
}

// TestSnoozeDoesNotConsumeAttempts: a run of one attempt snoozes three
// times and then completes on that one attempt, on both stores; the
// handler saw attempt 1 every time.
func TestSnoozeDoesNotConsumeAttempts(t *testing.T) {
	t.Parallel()
	for k, s := range hostileClients {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var attempts []int
			c := snoozeClient(t, k, leasehold.WorkerConfig{}, func(_ context.Context, r *leasehold.RunHandle) error {
				mu.Lock()
				defer mu.Unlock()
				attempts = append(attempts, r.Attempt)
				if len(attempts) <= 3 {
					return leasehold.Snooze(time.Millisecond)
				}
				return nil
			})
			enq, err := c.Enqueue(context.Background(), leasehold.Enqueue{Queue: "q", MaxAttempts: 1})
			require.NoError(t, err)
			r := settled(t, c, enq[0].Run.ID, func(r *leasehold.Run) bool { return r.State == runs.StateCompleted })
			require.Equal(t, 1, r.Attempt)
			require.Equal(t, 3, r.Snoozes)
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, []int{1, 1, 1, 1}, attempts)
		})
	}
}

// TestSnoozeLimitFailsTheAttemptLoudly: past WorkerConfig.MaxSnoozes a
// snooze fails the attempt with the limit as the reason; a handler that
// snoozes forever ends failed, never silently snoozing on.
func TestSnoozeLimitFailsTheAttemptLoudly(t *testing.T) {
	t.Parallel()
	for k, s := range hostileClients {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			c := snoozeClient(t, k, leasehold.WorkerConfig{MaxSnoozes: 2}, func(context.Context, *leasehold.RunHandle) error {
				return leasehold.Snooze(0)
			})
			enq, err := c.Enqueue(context.Background(), leasehold.Enqueue{Queue: "q", MaxAttempts: 1})
			require.NoError(t, err)
			r := settled(t, c, enq[0].Run.ID, func(r *leasehold.Run) bool { return r.State == runs.StateFailed })
			require.Equal(t, 2, r.Snoozes)
			require.Contains(t, r.Reason, "it snoozed 2 times, the limit is 2")
		})
	}
}

// TestSnoozeBadInputIsTyped: Snooze of the hostile durations matches
// ErrInvalid exactly for those outside 0..runs.MaxDelay; returned from a
// handler, a refused one fails the attempt with the refusal (no snooze
// recorded), an accepted one snoozes for that long — the same on both
// stores. WorkerConfig.MaxSnoozes takes the hostile integers: out of
// 0..runs.MaxSnoozesLimit (0 is the default) is refused, typed.
func TestSnoozeBadInputIsTyped(t *testing.T) {
	t.Parallel()
	ds := hostile.Durations()
	outcomes := make([]map[string]string, len(hostileClients))
	for k, s := range hostileClients {
		t.Run(s.name, func(t *testing.T) {
			ctx := context.Background()
			byID := map[int64]time.Duration{}
			var mu sync.Mutex
			c := snoozeClient(t, k, leasehold.WorkerConfig{}, func(_ context.Context, r *leasehold.RunHandle) error {
				mu.Lock()
				defer mu.Unlock()
				if d, ok := byID[r.ID]; ok {
					delete(byID, r.ID) // snooze once; the next claim completes
					return leasehold.Snooze(d)
				}
				return nil
			})
			out := map[string]string{}
			for _, n := range append(hostile.Ints(), hostile.Int{Name: "max-snoozes", Value: runs.MaxSnoozesLimit},
				hostile.Int{Name: "max-snoozes+1", Value: runs.MaxSnoozesLimit + 1}) {
				_, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"q": 1}, MaxSnoozes: int(n.Value), ClockCheck: -1})
				valid := n.Value >= 0 && n.Value <= runs.MaxSnoozesLimit // 0: the default
				require.Equal(t, !valid, rootOutcome(err) == "ErrInvalid", "MaxSnoozes %s: %v", n.Name, err)
				if valid {
					require.NoError(t, err, n.Name)
				}
				out["WorkerConfig.MaxSnoozes/"+n.Name] = rootOutcome(err)
			}
			ids := map[string]int64{}
			before := time.Now()
			mu.Lock()
			for _, d := range ds {
				enq, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q", MaxAttempts: 1})
				require.NoError(t, err)
				byID[enq[0].Run.ID], ids[d.Name] = d.Value, enq[0].Run.ID
			}
			mu.Unlock()
			for _, d := range ds {
				err := leasehold.Snooze(d.Value)
				valid := d.Value >= 0 && d.Value <= runs.MaxDelay
				require.Equal(t, !valid, rootOutcome(err) == "ErrInvalid", "%s: %v", d.Name, err)
				r := settled(t, c, ids[d.Name], func(r *leasehold.Run) bool {
					return !valid || r.Snoozes == 1 && (r.State == runs.StateCompleted || d.Value >= time.Second)
				})
				if !valid {
					require.Equal(t, runs.StateFailed, r.State, d.Name)
					require.Zero(t, r.Snoozes, d.Name)
					require.Contains(t, r.Reason, "snooze refused", d.Name)
					out[d.Name] = "ErrInvalid"
					continue
				}
				require.Equal(t, 1, r.Snoozes, d.Name)
				if d.Value >= time.Second {
					require.Equal(t, runs.StateAvailable, r.State, d.Name)
					require.False(t, r.ScheduledAt.Before(before.Add(d.Value).Add(-time.Second)), "%s: scheduled at %s", d.Name, r.ScheduledAt)
				}
				out[d.Name] = fmt.Sprint("accepted ", r.State)
			}
			outcomes[k] = out
		})
	}
	require.Equal(t, outcomes[0], outcomes[1], "both stores answer alike")
	t.Logf("snooze: %d hostile durations and MaxSnoozes values on each store, the outcomes agree", len(outcomes[0]))
}

// signalHandler is a slog handler that signals each record whose message
// is msg: what a test waits on instead of sleeping.
type signalHandler struct {
	msg string
	ch  chan slog.Record
}

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.ch <- r:
		default:
		}
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }

// TestSnoozeIsFencedLikeComplete: a handler whose run an operator
// cancelled meanwhile returns Snooze; the snooze carries the stale fence
// and is refused (ErrFenced, logged), so the run stays cancelled and
// never snoozed, on both stores.
func TestSnoozeIsFencedLikeComplete(t *testing.T) {
	t.Parallel()
	for k, s := range hostileClients {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			refused := signalHandler{msg: "final write refused", ch: make(chan slog.Record, 1)}
			holding, release := make(chan int64, 1), make(chan struct{})
			c := snoozeClient(t, k, leasehold.WorkerConfig{Logger: slog.New(refused)}, func(_ context.Context, r *leasehold.RunHandle) error {
				holding <- r.ID
				<-release
				return leasehold.Snooze(0)
			})
			ctx := context.Background()
			enq, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q"})
			require.NoError(t, err)
			id := <-holding
			require.Equal(t, enq[0].Run.ID, id)
			cancelled, err := c.Cancel(ctx, id, "operator")
			require.NoError(t, err)
			close(release)
			rec := <-refused.ch
			var werr error
			rec.Attrs(func(a slog.Attr) bool {
				if a.Key == "err" {
					werr, _ = a.Value.Any().(error)
				}
				return true
			})
			require.ErrorIs(t, werr, leasehold.ErrFenced)
			r, err := c.Run(ctx, id)
			require.NoError(t, err)
			require.Equal(t, cancelled, r, "the stale snooze changed nothing")
			require.Zero(t, r.Snoozes)
		})
	}
}
