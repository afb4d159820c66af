package leasehold_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/runs"
)

// TestMiddlewareWrapsEveryHandler: on both stores, two middlewares wrap
// every handler of the worker in order (first outermost), see the run,
// and the outcome they return is the one recorded — a middleware may
// turn a handler's error into a snooze, and a panicking handler under
// middleware is still a failed attempt with its stack.
func TestMiddlewareWrapsEveryHandler(t *testing.T) {
	t.Parallel()
	for k, s := range hostileClients {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var mu sync.Mutex
			var trace []string
			record := func(name string) leasehold.Middleware {
				return func(ctx context.Context, r *leasehold.RunHandle, next func(context.Context) error) error {
					mu.Lock()
					trace = append(trace, fmt.Sprintf("%s>%s", name, r.Payload))
					mu.Unlock()
					err := next(ctx)
					mu.Lock()
					trace = append(trace, fmt.Sprintf("%s<%s:%v", name, r.Payload, err))
					mu.Unlock()
					return err
				}
			}
			transient := errors.New("transient")
			snoozeTransient := func(ctx context.Context, r *leasehold.RunHandle, next func(context.Context) error) error {
				if err := next(ctx); errors.Is(err, transient) && r.Attempt == 1 {
					return leasehold.Snooze(0)
				} else {
					return err
				}
			}
			var calls sync.Map
			c := snoozeClient(t, k, leasehold.WorkerConfig{Middleware: []leasehold.Middleware{record("outer"), snoozeTransient, record("inner")}},
				func(_ context.Context, r *leasehold.RunHandle) error {
					n, _ := calls.LoadOrStore(string(r.Payload), new(int))
					*n.(*int)++
					switch string(r.Payload) {
					case `"flaky"`:
						if *n.(*int) == 1 {
							return transient
						}
					case `"panic"`:
						panic("boom")
					}
					return nil
				})
			ids := map[string]int64{}
			for _, p := range []string{`"ok"`, `"flaky"`, `"panic"`} {
				out, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q", Payload: []byte(p), MaxAttempts: 1})
				require.NoError(t, err)
				ids[p] = out[0].Run.ID
			}
			ok := settled(t, c, ids[`"ok"`], func(r *leasehold.Run) bool { return r.State == runs.StateCompleted })
			require.Equal(t, 1, ok.Attempt)
			flaky := settled(t, c, ids[`"flaky"`], func(r *leasehold.Run) bool { return r.State == runs.StateCompleted })
			require.Equal(t, 1, flaky.Snoozes, "the middleware snoozed the transient error: no attempt spent")
			p := settled(t, c, ids[`"panic"`], func(r *leasehold.Run) bool { return r.State == runs.StateFailed })
			require.True(t, strings.HasPrefix(p.Reason, "handler panicked: boom\n"), p.Reason)
			mu.Lock()
			defer mu.Unlock()
			require.Contains(t, trace, `outer>"ok"`)
			require.Contains(t, trace, `inner<"ok":<nil>`)
			require.Contains(t, trace, `inner<"flaky":transient`, "the inner middleware saw the handler's error")
			require.Contains(t, trace, `outer<"flaky":snooze for 0s`, "the outer one saw the snooze the middle one made")
			require.NotContains(t, trace, `outer<"panic"`, "a panic unwinds the chain; the worker recovers it")
			first := func(s string) int {
				for i, x := range trace {
					if x == s {
						return i
					}
				}
				return -1
			}
			require.Less(t, first(`outer>"ok"`), first(`inner>"ok"`))
			require.Less(t, first(`inner<"ok":<nil>`), first(`outer<"ok":<nil>`))
		})
	}
}

// TestQueueTimeout: a handler past its queue's timeout gets its context
// ended, and its error fails the attempt with the timeout as the reason;
// another queue's handler is not bounded.
func TestQueueTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := openSQLite(t, leasehold.Config{})
	w, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"slow": 1, "free": 1}, ClockCheck: -1,
		FetchInterval: 5 * time.Millisecond, Timeouts: map[string]time.Duration{"slow": 50 * time.Millisecond}})
	require.NoError(t, err)
	var sawDeadline bool
	w.Handle("slow", func(ctx context.Context, r *leasehold.RunHandle) error {
		<-ctx.Done()
		_, sawDeadline = ctx.Deadline()
		return ctx.Err()
	})
	w.Handle("free", func(ctx context.Context, r *leasehold.RunHandle) error {
		if _, ok := ctx.Deadline(); ok {
			return errors.New("the free queue has a deadline")
		}
		return nil
	})
	slow, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "slow", Payload: []byte(`{}`), MaxAttempts: 1})
	require.NoError(t, err)
	free, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "free", Payload: []byte(`{}`), MaxAttempts: 1})
	require.NoError(t, err)
	require.NoError(t, w.Start(ctx))
	t.Cleanup(func() { _ = w.Stop(ctx) })
	r := settled(t, c, slow[0].Run.ID, func(r *leasehold.Run) bool { return r.State == runs.StateFailed })
	require.Equal(t, `handler of queue "slow" timed out after 50ms: context deadline exceeded`, r.Reason)
	require.True(t, sawDeadline)
	settled(t, c, free[0].Run.ID, func(r *leasehold.Run) bool { return r.State == runs.StateCompleted })

	_, err = c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"q": 1}, Timeouts: map[string]time.Duration{"q": -time.Second}})
	require.ErrorIs(t, err, leasehold.ErrInvalid)
}
