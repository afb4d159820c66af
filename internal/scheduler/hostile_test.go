package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// Hostile handler output (issue 17, defects 1, 2 and 7): what a handler
// hands back — a result, an effect's result, an error message — is never
// something the library can refuse to the handler's neighbours.

// hostileStore opens a store of kind sk behind driver.Validating, as the
// client does: the input rules run above the driver.
func hostileStore(t *testing.T, sk storeKind) scheduler.Store {
	store, _ := sk.open(t, clock.Real())
	return driver.Validating(store.(driver.Driver))
}

// runAll enqueues one run per entry of es on queue "q", starts a worker
// with concurrency len(es) whose handler is h, waits until every handler
// was invoked, releases them together (so their completions share
// batches), stops the worker (which waits for the handlers and their final
// writes) and returns the runs as stored, in es's order.
func runAll(t *testing.T, store scheduler.Store, es []runs.Enqueue, h scheduler.Handler) []*driver.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ids := make([]int64, len(es))
	for i := range es {
		es[i].Queue = "q"
		enq, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es[i : i+1]})
		require.NoError(t, err)
		ids[i] = enq[0].Run.ID
	}
	quiet := slog.New(slog.DiscardHandler)
	events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
	require.NoError(t, events.Start(context.Background()))
	defer events.Stop(context.Background())
	w, err := scheduler.NewWorker(store, events, scheduler.WorkerConfig{Queues: map[string]int{"q": len(es)},
		ClockCheck: -1, Logger: quiet})
	require.NoError(t, err)
	release := make(chan struct{})
	var held sync.WaitGroup
	held.Add(len(es))
	var once sync.Map // a handler invoked twice must not panic the WaitGroup
	w.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
		if _, again := once.LoadOrStore(r.ID, true); !again {
			held.Done()
		}
		select {
		case <-release:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		return h(ctx, r)
	})
	require.NoError(t, w.Start(ctx))
	held.Wait()
	close(release)
	require.NoError(t, w.Stop(ctx))
	out := make([]*driver.Run, len(ids))
	for i, id := range ids {
		out[i], err = store.RunGet(ctx, &driver.RunGetParams{ID: id})
		require.NoError(t, err)
	}
	return out
}

// TestHostileBadResultDoesNotPoisonBatch: 10 runs finish at the same
// moment, one of them with SetResult("not json") and a nil return. The 9
// good ones complete exactly once with their results; the bad one learns
// at SetResult (a typed ErrInvalid), and its attempt fails with the
// refusal as the reason — it is never left running, and no good run ends
// failed or runs twice.
func TestHostileBadResultDoesNotPoisonBatch(t *testing.T) {
	t.Parallel()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			t.Parallel()
			store := hostileStore(t, sk)
			const n, bad = 10, 4
			es := make([]runs.Enqueue, n)
			es[bad].MaxAttempts = 1 // its failed attempt is final: the test sees where it ends
			es[bad].Payload = []byte(`"bad"`)
			var calls sync.Map
			var setErr atomic.Value
			got := runAll(t, store, es, func(ctx context.Context, r *scheduler.Run) error {
				c, _ := calls.LoadOrStore(r.ID, new(atomic.Int64))
				c.(*atomic.Int64).Add(1)
				if string(r.Payload) == `"bad"` {
					if err := r.SetResult([]byte("not json")); err != nil {
						setErr.Store(err)
					}
					return nil
				}
				return r.SetResult([]byte(`{ "ok" : true }`))
			})
			for i, run := range got {
				c, _ := calls.Load(run.ID)
				require.NotNil(t, c, "run %d never invoked", run.ID)
				require.EqualValues(t, 1, c.(*atomic.Int64).Load(), "run %d: handler invocations", run.ID)
				if i == bad {
					require.Equal(t, runs.StateFailed, run.State, "the bad run ends as decided: its attempt failed with the refusal")
					require.Contains(t, run.Reason, "result")
					require.Contains(t, run.Reason, "malformed JSON")
					require.Nil(t, run.Result)
					continue
				}
				require.Equal(t, runs.StateCompleted, run.State, "good run %d (reason %q)", run.ID, run.Reason)
				require.Equal(t, `{"ok":true}`, string(run.Result), "good run %d: its result, compact", run.ID)
			}
			err, _ := setErr.Load().(error)
			require.Error(t, err, "SetResult must refuse a result that is not JSON")
			require.ErrorIs(t, err, lease.ErrInvalid)
		})
	}
}

// TestHostileCompleterRefusedRowAlone: a completion the store refuses
// (here one that skipped the completer's own check and reached the batch)
// is answered alone with its typed error; its batch neighbours complete.
func TestHostileCompleterRefusedRowAlone(t *testing.T) {
	t.Parallel()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			store := hostileStore(t, sk)
			const n, bad = 10, 6
			cs := make([]driver.RunCompletion, n)
			for range cs {
				_, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
				require.NoError(t, err)
			}
			claimed, err := store.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "o", Limit: n, Lease: time.Minute})
			require.NoError(t, err)
			require.Len(t, claimed, n)
			for i, r := range claimed {
				cs[i] = driver.RunCompletion{ID: r.ID, Fence: r.Fence, Result: []byte(`{"i":1}`)}
			}
			cs[bad].Result = []byte("hello")
			errs, flushes := scheduler.CompleteBatchForTest(ctx, store, cs)
			require.Equal(t, int64(1), flushes, "the ten shared one batch")
			for i, err := range errs {
				r, gerr := store.RunGet(ctx, &driver.RunGetParams{ID: cs[i].ID})
				require.NoError(t, gerr)
				if i == bad {
					require.ErrorIs(t, err, lease.ErrInvalid)
					require.Equal(t, runs.StateRunning, r.State, "a refused completion changes nothing")
					continue
				}
				require.NoError(t, err, "completion %d", i)
				require.Equal(t, runs.StateCompleted, r.State)
			}
		})
	}
}

// hostileResults are effect results the ledger cannot store.
func hostileResults() map[string][]byte {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	big := make([]byte, 10<<20)
	for i := range big {
		big[i] = 'a'
	}
	big[0], big[len(big)-1] = '"', '"'
	over := `"` + strings.Repeat("b", runs.MaxPayloadBytes-1) + `"` // compact 64 KiB + 1
	return map[string][]byte{
		"hello":    []byte("hello"),
		"10MB":     big,
		"over64K":  []byte(over),
		"nul":      {'"', 0, '"'},
		"badutf8":  {'"', 0xff, '"'},
		"bom":      []byte("\xef\xbb\xbf{}"),
		"deep":     []byte(deep),
		"rawnul":   {0},
		"trailing": []byte(`{} x`),
	}
}

// TestHostileEffectResultRefusedAfterItRan: an effect whose fn returns a
// result the ledger cannot store happened all the same. Effect answers a
// typed error (ErrInvalid, a *scheduler.EffectResultError) saying so, the
// effect is recorded as done, and the next Effect with its key returns the
// recorded outcome — the same typed error — without calling fn again and
// without ErrUncertain.
func TestHostileEffectResultRefusedAfterItRan(t *testing.T) {
	t.Parallel()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			t.Parallel()
			store := hostileStore(t, sk)
			bad := hostileResults()
			type outcome struct {
				calls       int
				first, next error
				goodAfter   []byte
			}
			res := map[string]*outcome{}
			var mu sync.Mutex
			got := runAll(t, store, make([]runs.Enqueue, 1), func(ctx context.Context, r *scheduler.Run) error {
				for name, result := range bad {
					o := &outcome{}
					fn := func(context.Context, scheduler.EffectToken) ([]byte, error) {
						o.calls++
						return result, nil
					}
					_, o.first = r.Effect(ctx, name, time.Second, fn)
					_, o.next = r.Effect(ctx, name, time.Second, fn)
					mu.Lock()
					res[name] = o
					mu.Unlock()
				}
				// A good result next to them is stored as it was given.
				out, err := r.Effect(ctx, "good", time.Second, func(context.Context, scheduler.EffectToken) ([]byte, error) {
					return []byte(`{"sent": 1}`), nil
				})
				if err != nil {
					return err
				}
				res["good"] = &outcome{goodAfter: out}
				return nil
			})
			require.Equal(t, runs.StateCompleted, got[0].State, "reason %q", got[0].Reason)
			require.Equal(t, `{"sent":1}`, string(res["good"].goodAfter))
			for name := range bad {
				o := res[name]
				require.NotNil(t, o, name)
				require.Equal(t, 1, o.calls, "%s: fn runs once", name)
				for _, err := range []error{o.next, o.first} {
					require.Error(t, err, name)
					require.NotErrorIs(t, err, scheduler.ErrUncertain, "%s: an effect that happened is never uncertain", name)
					require.ErrorIs(t, err, lease.ErrInvalid, name)
					var re *scheduler.EffectResultError
					require.ErrorAs(t, err, &re, name)
					require.Equal(t, name, re.Key)
					require.Contains(t, err.Error(), "happened")
				}
			}
			effs, err := store.RunEffectList(context.Background(), &driver.RunEffectListParams{RunID: got[0].ID})
			require.NoError(t, err)
			require.Len(t, effs, len(bad)+1)
			for _, e := range effs {
				require.True(t, e.Committed, "effect %q recorded as done", e.Key)
			}
		})
	}
}

// TestHostileReasonsEscapedNotCut: a reason derived from handler text —
// an error, a block, a panic — keeps everything it said: bytes the reason
// rule refuses are escaped (\xHH, \u{HHHH}), never dropped or replaced,
// and a reason over the limit ends in the cut marker.
func TestHostileReasonsEscapedNotCut(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 5000)
	cases := []struct {
		name string
		do   func() error
		want func(t *testing.T, reason string)
	}{
		{"error", func() error { return errors.New("head \xff tail-that-matters") }, func(t *testing.T, r string) {
			require.Equal(t, `head \xff tail-that-matters`, r)
		}},
		{"block", func() error { return scheduler.Block("blk \xff rest…") }, func(t *testing.T, r string) {
			require.Equal(t, `blk \xff rest…`, r)
		}},
		{"nul", func() error { return errors.New("a\x00b") }, func(t *testing.T, r string) {
			require.Equal(t, `a\u{0000}b`, r)
		}},
		{"panic", func() error { panic("boom \xff \x00 end") }, func(t *testing.T, r string) {
			head, stack, ok := strings.Cut(r, "\n")
			require.True(t, ok, "the stack follows the value: %q", r)
			require.Equal(t, `handler panicked: boom \xff \u{0000} end`, head)
			require.Contains(t, stack, "scheduler_test.TestHostileReasonsEscapedNotCut", "the stack starts at the panicking frame")
		}},
		{"long", func() error { return errors.New(long) }, func(t *testing.T, r string) {
			require.LessOrEqual(t, len(r), runs.MaxReasonBytes)
			require.Regexp(t, `^x+ … \[cut: \d+ of 5000 bytes\]$`, r)
		}},
	}
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			t.Parallel()
			store := hostileStore(t, sk)
			es := make([]runs.Enqueue, len(cases))
			for i := range es {
				es[i].MaxAttempts = 1
				es[i].Payload = []byte{'0' + byte(i)}
			}
			got := runAll(t, store, es, func(ctx context.Context, r *scheduler.Run) error {
				return cases[r.Payload[0]-'0'].do()
			})
			for i, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					want := runs.StateFailed
					if c.name == "block" {
						want = runs.StateBlocked
					}
					require.Equal(t, want, got[i].State)
					c.want(t, got[i].Reason)
				})
			}
		})
	}
}
