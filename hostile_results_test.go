package leasehold_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/runs"
)

// hostileClients opens a client over a fresh store of each kind.
var hostileClients = []struct {
	name string
	open func(t *testing.T) leasehold.Driver
}{
	{"sqlite", func(t *testing.T) leasehold.Driver {
		d, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db")})
		require.NoError(t, err)
		return d
	}},
	{"postgres", func(t *testing.T) leasehold.Driver {
		url, schema := testdb.Schema(t)
		d, err := postgres.Open(context.Background(), postgres.Config{URL: url, Schema: schema,
			Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		return d
	}},
}

// TestHostileResultsThroughTheClient: through the public face, on both
// stores, 10 runs finish together and one of them sets a result that is
// not JSON and returns nil; another's effect returns "hello". SetResult
// refuses the bad result (ErrInvalid) and that run's attempt fails with the
// refusal; the effect is recorded as done and its retry answers the same
// typed error without calling fn; every good run completes exactly once.
func TestHostileResultsThroughTheClient(t *testing.T) {
	t.Parallel()
	for _, k := range hostileClients {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := leasehold.NewClient(ctx, k.open(t), leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })

			const n = 10
			ids := make([]int64, n)
			for i := range ids {
				e := leasehold.Enqueue{Queue: "q", Payload: []byte(`"good"`)}
				switch i {
				case 3:
					e.Payload, e.MaxAttempts = []byte(`"bad-result"`), 1
				case 7:
					e.Payload = []byte(`"bad-effect"`)
				}
				enq, err := c.Enqueue(ctx, e)
				require.NoError(t, err)
				ids[i] = enq[0].Run.ID
			}
			var calls sync.Map
			var setErr, effErr, retryErr atomic.Value
			var fnCalls atomic.Int64
			release := make(chan struct{})
			var held sync.WaitGroup
			held.Add(n)
			w, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"q": n}, ClockCheck: -1,
				Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			w.Handle("q", func(ctx context.Context, r *leasehold.RunHandle) error {
				cnt, loaded := calls.LoadOrStore(r.ID, new(atomic.Int64))
				cnt.(*atomic.Int64).Add(1)
				if !loaded {
					held.Done()
				}
				select {
				case <-release:
				case <-ctx.Done():
					return ctx.Err()
				}
				switch string(r.Payload) {
				case `"bad-result"`:
					if err := r.SetResult([]byte("not json")); err != nil {
						setErr.Store(err)
					}
					return nil
				case `"bad-effect"`:
					fn := func(context.Context, leasehold.EffectToken) ([]byte, error) {
						fnCalls.Add(1)
						return []byte("hello"), nil
					}
					_, err := r.Effect(ctx, "send", time.Second, fn)
					effErr.Store(err)
					_, err = r.Effect(ctx, "send", time.Second, fn)
					retryErr.Store(err)
				}
				return r.SetResult([]byte(`{"done": true}`))
			})
			require.NoError(t, w.Start(ctx))
			held.Wait()
			close(release)
			require.NoError(t, w.Stop(ctx))

			for i, id := range ids {
				run, err := c.Run(ctx, id)
				require.NoError(t, err)
				cnt, _ := calls.Load(id)
				require.EqualValues(t, 1, cnt.(*atomic.Int64).Load(), "run %d: handler invocations", id)
				if i == 3 {
					require.Equal(t, runs.StateFailed, run.State)
					require.Contains(t, run.Reason, "result refused")
					continue
				}
				require.Equal(t, runs.StateCompleted, run.State, "run %d (reason %q)", id, run.Reason)
				require.Equal(t, `{"done":true}`, string(run.Result))
			}
			for _, v := range []*atomic.Value{&setErr, &effErr, &retryErr} {
				err, _ := v.Load().(error)
				require.ErrorIs(t, err, leasehold.ErrInvalid)
				require.False(t, errors.Is(err, leasehold.ErrUncertain))
			}
			require.EqualValues(t, 1, fnCalls.Load(), "the effect ran once")
		})
	}
}
