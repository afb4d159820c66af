package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/remote"
	"github.com/leasehold/leasehold/runs"
)

// aWorker is what both workers offer: the switch is the constructor.
type aWorker interface {
	Handle(queue string, h leasehold.Handler)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// TestTheSameHandlerRunsInProcessAndRemotely: one leasehold.Handler —
// Emit, Effect, SetResult, Block, an error — works 12 runs under the
// in-process worker and 12 under the remote worker over a real server, on
// each store: every run ends as its handler said, each effect invoked
// once and committed, each event stored.
func TestTheSameHandlerRunsInProcessAndRemotely(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		s := serve(t, open, lease.Timing{}, false)
		ctx := context.Background()
		for _, kind := range []string{"in-process", "remote"} {
			var invoked atomic.Int64
			handler := func(ctx context.Context, r *leasehold.RunHandle) error {
				var p struct{ Do string }
				if err := json.Unmarshal(r.Payload, &p); err != nil {
					return err
				}
				if err := r.Emit(ctx, "started", []byte(`{"by":"`+kind+`"}`)); err != nil {
					return err
				}
				switch p.Do {
				case "block":
					return leasehold.Block("waiting for a human")
				case "fail":
					return errors.New("it went wrong")
				}
				res, err := r.Effect(ctx, "charge", time.Second, func(ctx context.Context, tok leasehold.EffectToken) ([]byte, error) {
					invoked.Add(1)
					return []byte(fmt.Sprintf(`{"token":%q,"fence":%d}`, tok.IdempotencyKey, tok.Fence)), nil
				})
				if err != nil {
					return err
				}
				return r.SetResult(res)
			}
			var w aWorker
			var err error
			switch kind {
			case "in-process":
				w, err = s.c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{kind: 4}, ClockCheck: -1, Logger: slog.New(slog.DiscardHandler)})
			case "remote":
				w, err = remote.NewWorker(remote.WorkerConfig{Client: s.client(), Queues: map[string]int{kind: 4}, Wait: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
			}
			require.NoError(t, err)
			w.Handle(kind, handler)

			want := map[int64]runs.State{}
			var ids []int64
			for i := range 12 {
				do := []string{"complete", "complete", "block", "fail"}[i%4]
				e, err := s.c.Enqueue(ctx, leasehold.Enqueue{Queue: kind, Payload: []byte(`{"do":"` + do + `"}`), MaxAttempts: 1})
				require.NoError(t, err)
				id := e[0].Run.ID
				ids = append(ids, id)
				want[id] = map[string]runs.State{"complete": runs.StateCompleted, "block": runs.StateBlocked, "fail": runs.StateFailed}[do]
			}
			require.NoError(t, w.Start(ctx))
			for _, id := range ids { // each run reaches its end state (bounded: the test's own deadline)
				sub := s.c.Subscribe(ctx, id, leasehold.SubscribeOptions{})
				<-sub // its first event: its handler ran
			}
			stop, cancel := context.WithTimeout(ctx, 30*time.Second)
			require.NoError(t, w.Stop(stop))
			cancel()
			for _, id := range ids {
				r, err := s.c.Run(ctx, id)
				require.NoError(t, err)
				require.Equal(t, want[id], r.State, "%s run %d: %s", kind, id, r.Reason)
				evs, err := s.c.Events(ctx, id, 0, 0, 0)
				require.NoError(t, err)
				require.Len(t, evs, 1)
				require.JSONEq(t, `{"by":"`+kind+`"}`, string(evs[0].Payload))
				if want[id] == runs.StateCompleted {
					require.JSONEq(t, fmt.Sprintf(`{"token":"%d:charge","fence":%d}`, id, r.Fence), string(r.Result))
				}
			}
			require.Equal(t, int64(6), invoked.Load(), "%s: each completing run's effect invoked once", kind)
		}
	})
}

// TestClientCallsAndProblems: the client's calls against a real server —
// the token is sent (without one, or with a scope too narrow, a call is
// refused, typed), a claim's deadline is the send time plus
// the runway, and every refusal is a *remote.Problem matching its
// leasehold sentinel.
func TestClientCallsAndProblems(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		s := serve(t, open, lease.Timing{}, false)
		ctx := context.Background()
		c := s.client()
		_, err := remote.New(s.url).Enqueue(ctx, remote.Enqueue{Queue: "q"})
		p, ok := remote.AsProblem(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, "unauthorized", p.Kind())
		narrow, _, err := s.c.CreateToken(ctx, "narrow", []string{"work:queue:other"})
		require.NoError(t, err)
		_, err = s.client(remote.WithToken(narrow)).Enqueue(ctx, remote.Enqueue{Queue: "q"})
		p, ok = remote.AsProblem(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, "forbidden", p.Kind())
		_, err = c.Enqueue(ctx, remote.Enqueue{Queue: "q", Payload: json.RawMessage(`{"n":1}`)}, remote.Enqueue{Queue: "q"})
		require.NoError(t, err)
		before := time.Now()
		ls, err := c.Claim(ctx, "q", "me", 2, 0)
		require.NoError(t, err)
		require.Len(t, ls, 2)
		for _, l := range ls {
			require.Positive(t, l.RunwayMS)
			require.False(t, l.Deadline.Before(before.Add(time.Duration(l.RunwayMS)*time.Millisecond)))
			require.False(t, l.Deadline.After(time.Now().Add(time.Duration(l.RunwayMS)*time.Millisecond)), "deadline = send + runway")
		}
		ren, err := c.Renew(ctx, ls[0].ID, ls[0].Fence, "me")
		require.NoError(t, err)
		require.Equal(t, "writebehind", ren.Renewal)

		_, err = c.Complete(ctx, ls[0].ID, ls[0].Fence+1, nil)
		require.ErrorIs(t, err, leasehold.ErrFenced)
		p, ok = remote.AsProblem(err)
		require.True(t, ok)
		require.Equal(t, ls[0].Fence, p.CurrentFence)
		_, err = c.Get(ctx, 999)
		require.ErrorIs(t, err, leasehold.ErrNotFound)
		_, err = c.Enqueue(ctx, remote.Enqueue{Queue: ""})
		require.ErrorIs(t, err, leasehold.ErrInvalid)

		done, fenced, err := c.CompleteMany(ctx, []remote.Completion{{ID: ls[0].ID, Fence: ls[0].Fence}, {ID: ls[1].ID, Fence: ls[1].Fence + 1}})
		require.NoError(t, err)
		require.Equal(t, []int64{ls[0].ID}, done)
		require.Equal(t, []int{1}, fenced)
	})
}
