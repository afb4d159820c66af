package leaseholdtest_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/leaseholdtest"
	"github.com/leasehold/leasehold/runs"
)

// store is one kind of store: a client over a fresh one, and how to open
// a caller's transaction on it.
type store struct {
	name string
	open func(t *testing.T) (*leasehold.Client, func(ctx context.Context) (tx any, commit, rollback func() error))
}

var stores = []store{
	{"sqlite", func(t *testing.T) (*leasehold.Client, func(context.Context) (any, func() error, func() error)) {
		ctx := context.Background()
		d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db")})
		require.NoError(t, err)
		c, err := leasehold.NewClient(ctx, d, leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c, func(ctx context.Context) (any, func() error, func() error) {
			tx, err := d.BeginTx(ctx)
			require.NoError(t, err)
			return tx, tx.Commit, tx.Rollback
		}
	}},
	{"postgres", func(t *testing.T) (*leasehold.Client, func(context.Context) (any, func() error, func() error)) {
		ctx := context.Background()
		url, schema := testdb.Schema(t)
		d, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		c, err := leasehold.NewClient(ctx, d, leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c, func(ctx context.Context) (any, func() error, func() error) {
			tx, err := d.BeginTx(ctx, pgx.TxOptions{})
			require.NoError(t, err)
			return tx, func() error { return tx.Commit(ctx) }, func() error { return tx.Rollback(ctx) }
		}
	}},
}

// recorder is a T that records a failure instead of failing the test, so
// the helpers' own failures can be checked. FailNow stops the helper as
// testing.T's does (by unwinding the goroutine, here with a panic the
// caller recovers).
type recorder struct{ msgs []string }

type failNow struct{}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) FailNow() { panic(failNow{}) }

// fails runs fn with a recorder and returns what it reported (nil: it
// did not fail).
func fails(fn func(t leaseholdtest.T)) []string {
	r := &recorder{}
	func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(failNow); !ok {
					panic(p)
				}
			}
		}()
		fn(r)
	}()
	return r.msgs
}

func TestRequireEnqueued(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, begin := s.open(t)
			_, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "email", Payload: []byte(`{"to":"a@example.com","n":1,"tags":["x"]}`), Priority: 3})
			require.NoError(t, err)
			_, err = c.Enqueue(ctx, leasehold.Enqueue{Queue: "email", Payload: []byte(`{"to":"b@example.com","n":2}`), UniqueKey: "b"})
			require.NoError(t, err)

			three := 3
			r := leaseholdtest.RequireEnqueued(ctx, t, c, "email", &leaseholdtest.EnqueuedOpts{
				Payload: map[string]any{"to": "a@example.com", "tags": []string{"x"}}, Priority: &three, State: runs.StateAvailable})
			require.JSONEq(t, `{"to":"a@example.com","n":1,"tags":["x"]}`, string(r.Payload))
			b := leaseholdtest.RequireEnqueued(ctx, t, c, "email", &leaseholdtest.EnqueuedOpts{UniqueKey: "b", Payload: map[string]any{"n": 2}})
			require.Equal(t, "b", b.UniqueKey)
			leaseholdtest.RequireNotEnqueued(ctx, t, c, "email", &leaseholdtest.EnqueuedOpts{Payload: map[string]any{"to": "c@example.com"}})
			leaseholdtest.RequireNotEnqueued(ctx, t, c, "sms", nil)

			msgs := fails(func(rt leaseholdtest.T) {
				leaseholdtest.RequireEnqueued(ctx, rt, c, "email", &leaseholdtest.EnqueuedOpts{Payload: map[string]any{"n": 3}})
			})
			require.Len(t, msgs, 1, "a missing run fails the test")
			require.Contains(t, msgs[0], `payload field "n" is 2, want 3`)
			require.NotEmpty(t, fails(func(rt leaseholdtest.T) {
				leaseholdtest.RequireNotEnqueued(ctx, rt, c, "email", &leaseholdtest.EnqueuedOpts{Payload: map[string]any{"n": 1}})
			}), "a present run fails RequireNotEnqueued")

			// In the caller's transaction: seen through it before the
			// commit, by nobody else, and gone after a rollback.
			tx, _, rollback := begin(ctx)
			_, err = c.EnqueueTx(ctx, tx, leasehold.Enqueue{Queue: "invoice", Payload: []byte(`{"order":42}`)})
			require.NoError(t, err)
			got := leaseholdtest.RequireEnqueuedTx(ctx, t, tx, "invoice", &leaseholdtest.EnqueuedOpts{Payload: map[string]any{"order": 42}})
			require.Equal(t, runs.StateAvailable, got.State)
			require.NotEmpty(t, fails(func(rt leaseholdtest.T) {
				leaseholdtest.RequireEnqueuedTx(ctx, rt, tx, "invoice", &leaseholdtest.EnqueuedOpts{Payload: map[string]any{"order": 43}})
			}))
			require.NoError(t, rollback())
			leaseholdtest.RequireNotEnqueued(ctx, t, c, "invoice", nil)
			require.NotEmpty(t, fails(func(rt leaseholdtest.T) {
				leaseholdtest.RequireEnqueuedTx(ctx, rt, "not a tx", "invoice", nil)
			}))
		})
	}
}

func TestWorkUnderAFakeClock(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, _ := s.open(t)
			fake := clock.NewFake(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
			_, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q", Payload: []byte(`{"x":1}`)}, leasehold.Enqueue{Queue: "q", Payload: []byte(`{"x":2}`)})
			require.NoError(t, err)
			calls := 0
			h := func(ctx context.Context, r *leasehold.RunHandle) error {
				if string(r.Payload) == `{"x":2}` {
					return errors.New("x is 2")
				}
				out, err := r.Effect(ctx, "charge", time.Second, func(context.Context, leasehold.EffectToken) ([]byte, error) {
					calls++
					return []byte(`"ok"`), nil
				})
				if err != nil {
					return err
				}
				return r.SetResult(out)
			}
			res := leaseholdtest.Work(ctx, t, c, "q", h, &leaseholdtest.WorkOpts{Clock: fake})
			require.NoError(t, res.Err)
			require.Equal(t, runs.StateCompleted, res.Run.State)
			require.JSONEq(t, `"ok"`, string(res.Run.Result))
			require.Equal(t, 1, calls)
			require.Equal(t, "", res.Run.Owner)

			res = leaseholdtest.Work(ctx, t, c, "q", h, &leaseholdtest.WorkOpts{Clock: fake})
			require.EqualError(t, res.Err, "x is 2")
			require.Equal(t, runs.StateAvailable, res.Run.State, "a failed attempt is retried later")
			require.Equal(t, 1, res.Run.Attempt)
			require.Contains(t, res.Run.Reason, "x is 2")
			require.NotEmpty(t, fails(func(rt leaseholdtest.T) { leaseholdtest.Work(ctx, rt, c, "q", h, nil) }),
				"no run due (the retry waits its backoff): the test fails")
		})
	}
}

func TestEnqueueUncertainDrivesReconciliation(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, _ := s.open(t)
			r := leaseholdtest.EnqueueUncertain(ctx, t, c, leasehold.Enqueue{Queue: "pay", Payload: []byte(`{}`)}, "charge")
			require.Equal(t, runs.StateAvailable, r.State)
			require.Equal(t, 1, r.Attempt)

			var seen *leasehold.UncertainEffectError
			called := false
			res := leaseholdtest.Work(ctx, t, c, "pay", func(ctx context.Context, h *leasehold.RunHandle) error {
				charge := func(context.Context, leasehold.EffectToken) ([]byte, error) {
					called = true
					return []byte(`"new"`), nil
				}
				_, err := h.Effect(ctx, "charge", time.Second, charge)
				if !errors.As(err, &seen) {
					return fmt.Errorf("want uncertain, got %v", err)
				}
				// Reconcile: the downstream says it happened.
				if err := h.ResolveEffect(ctx, "charge", true, []byte(`"downstream"`)); err != nil {
					return err
				}
				out, err := h.Effect(ctx, "charge", time.Second, charge)
				if err != nil {
					return err
				}
				return h.SetResult(out)
			}, &leaseholdtest.WorkOpts{Clock: clock.NewFake(time.Now())})
			require.NoError(t, res.Err)
			require.ErrorIs(t, seen, leasehold.ErrUncertain)
			require.Equal(t, "charge", seen.Key)
			require.False(t, called, "an uncertain effect is never run again")
			require.Equal(t, runs.StateCompleted, res.Run.State)
			require.JSONEq(t, `"downstream"`, string(res.Run.Result))

			require.NotEmpty(t, fails(func(rt leaseholdtest.T) {
				leaseholdtest.EnqueueUncertain(ctx, rt, c, leasehold.Enqueue{Queue: "pay", MaxAttempts: 1}, "charge")
			}), "one attempt cannot show an uncertain effect")
		})
	}
}
