package leasehold_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/hostile"
)

// rootSentinels are the root's exported sentinels, in the order an outcome
// is named by (the first that matches).
var rootSentinels = []struct {
	name string
	err  error
}{
	{"ErrUnknownQueue", leasehold.ErrUnknownQueue}, {"ErrInvalidTiming", leasehold.ErrInvalidTiming},
	{"ErrEffectDuration", leasehold.ErrEffectDuration}, {"ErrInvalid", leasehold.ErrInvalid},
	{"ErrNotFound", leasehold.ErrNotFound}, {"ErrConflict", leasehold.ErrConflict},
	{"ErrFenced", leasehold.ErrFenced}, {"ErrNotHolder", leasehold.ErrNotHolder},
	{"ErrLeaseExpired", leasehold.ErrLeaseExpired}, {"ErrSeenBehind", leasehold.ErrSeenBehind},
	{"ErrLeaseHeld", leasehold.ErrLeaseHeld}, {"ErrSchemaTooNew", leasehold.ErrSchemaTooNew},
	{"ErrNotMigrated", leasehold.ErrNotMigrated}, {"ErrCorrupt", leasehold.ErrCorrupt},
	{"ErrLeaseRunway", leasehold.ErrLeaseRunway}, {"ErrLeaseLost", leasehold.ErrLeaseLost},
	{"ErrUncertain", leasehold.ErrUncertain}, {"ErrClosed", leasehold.ErrClosed},
}

func rootOutcome(err error) string {
	if err == nil {
		return "accepted"
	}
	for _, s := range rootSentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "untyped"
}

// rootCall is one corpus value driven into one entry point of the public
// face: call makes it, check reads an accepted value back.
type rootCall struct {
	call  func() error
	check func() error
}

// compactJSON is the form a payload reads back in, computed with
// encoding/json alone (nothing but JSON whitespace is null).
func compactJSON(v []byte) []byte {
	if len(bytes.Trim(v, " \t\r\n")) == 0 {
		return []byte("null")
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return nil
	}
	return b.Bytes()
}

func readsBack(what string, got, want any) error {
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("%s reads back %.80q, want %.80q", what, fmt.Sprint(got), fmt.Sprint(want))
	}
	return nil
}

// TestHostileCorpusThroughTheClient drives the corpus of internal/hostile
// through the entry points of the public face that are not one driver
// call — the client's own (config, worker config, enqueue with its queue
// rule, world calls through the appender and planners) and a handler's
// (SetResult, Emit, Effect) — on both stores, and holds each call to the
// contract: a refusal matches one exported sentinel, an acceptance reads
// back, and both stores answer alike. (Refusals are not fingerprinted
// here: a handler's refused result fails its attempt by design; the
// driver-level suite, drivertest's HostileInputContract, checks that
// refusals below change nothing.)
func TestHostileCorpusThroughTheClient(t *testing.T) {
	t.Parallel()
	outcomes := make([]map[string]string, len(hostileClients))
	for k, s := range hostileClients {
		t.Run(s.name, func(t *testing.T) {
			outcomes[k] = driveClient(t, s.open(t))
		})
	}
	var diff []string
	for key, a := range outcomes[0] {
		if b := outcomes[1][key]; a != b {
			diff = append(diff, fmt.Sprintf("%s: sqlite %s, postgres %s", key, a, b))
		}
	}
	sort.Strings(diff)
	t.Logf("hostile root: %d calls on each store, disagreements=%d", len(outcomes[0]), len(diff))
	require.Len(t, outcomes[1], len(outcomes[0]))
	require.Empty(t, diff)
}

func driveClient(t *testing.T, d leasehold.Driver) map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	c, err := leasehold.NewClient(ctx, d, leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })

	strs, payloads := hostile.Strings(), hostile.Payloads()
	out := map[string]string{}
	var untyped, failures, calls int
	record := func(key string, err error, check func() error) {
		calls++
		out[key] = rootOutcome(err)
		switch {
		case out[key] == "untyped":
			untyped++
			t.Errorf("%s: untyped error: %v", key, err)
		case err == nil && check != nil:
			if cerr := check(); cerr != nil {
				failures++
				t.Errorf("%s: accepted, but: %v", key, cerr)
			}
		}
	}
	n := 0
	world := func() string {
		n++
		w := fmt.Sprintf("cw%d", n)
		_, err := c.CreateWorld(ctx, w, "h")
		require.NoError(t, err)
		return w
	}

	// The client's own entry points.
	for _, s := range strs {
		v := s.Value
		entries := map[string]rootCall{
			"Config.Queues": {call: func() error { return leasehold.Config{Queues: []string{v}}.Validate() }},
			"WorkerConfig.Owner": {call: func() error {
				_, err := c.NewWorker(leasehold.WorkerConfig{Owner: v, Queues: map[string]int{"q": 1}, ClockCheck: -1})
				return err
			}},
			"WorkerConfig.Queues": {call: func() error {
				_, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{v: 1}, ClockCheck: -1})
				return err
			}},
			"Client.CreateWorld.id": {call: func() error { _, err := c.CreateWorld(ctx, v, "h"); return err },
				check: func() error {
					w, err := c.World(ctx, v)
					require.NoError(t, err)
					return readsBack("world", w.World, v)
				}},
			"Client.Enqueue.queue":   {call: func() error { _, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: v}); return err }},
			"Client.EnqueueTx.queue": {call: func() error { _, err := enqueueTx(ctx, c, d, leasehold.Enqueue{Queue: v}); return err }},
			"Client.Enqueue.unique_key": {call: func() error {
				enq, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q", UniqueKey: v})
				if err == nil {
					if r, rerr := c.Run(ctx, enq[0].Run.ID); rerr != nil || r.UniqueKey != v {
						return fmt.Errorf("unique key does not read back: %v", rerr)
					}
				}
				return err
			}},
			"Client.Cancel.reason": func() rootCall {
				enq, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q"})
				require.NoError(t, err)
				id := enq[0].Run.ID
				return rootCall{call: func() error { _, err := c.Cancel(ctx, id, v); return err },
					check: func() error {
						r, err := c.Run(ctx, id)
						require.NoError(t, err)
						return readsBack("reason", r.Reason, v)
					}}
			}(),
			"Client.Revoke.reason": func() rootCall {
				w := world()
				return rootCall{call: func() error { _, err := c.Revoke(ctx, w, 1, v); return err }}
			}(),
			"Client.Handoff.to": func() rootCall {
				w := world()
				return rootCall{call: func() error { _, err := c.Handoff(ctx, w, "h", v, 1); return err },
					check: func() error {
						got, err := c.World(ctx, w)
						require.NoError(t, err)
						return readsBack("holder", got.Holder, v)
					}}
			}(),
			"Client.Append.kind": func() rootCall {
				w := world()
				return rootCall{call: func() error {
					_, err := c.Append(ctx, leasehold.AppendParams{World: w, Holder: "h", Epoch: 1, SeenPosition: 1, Kind: v})
					return err
				}, check: func() error {
					es, err := c.Read(ctx, w, 2, 1)
					require.NoError(t, err)
					return readsBack("kind", es[0].Kind, v)
				}}
			}(),
			"Client.Append.key": func() rootCall {
				w := world()
				return rootCall{call: func() error {
					_, err := c.Append(ctx, leasehold.AppendParams{World: w, Holder: "h", Epoch: 1, SeenPosition: 1, Kind: "note", Key: v})
					return err
				}, check: func() error {
					es, err := c.Read(ctx, w, 2, 1)
					require.NoError(t, err)
					return readsBack("key", es[0].Key, v)
				}}
			}(),
		}
		for ep, rc := range entries {
			record(ep+"/"+s.Name, rc.call(), rc.check)
		}
	}
	for _, p := range payloads {
		v := p.Value
		var id int64
		record("Client.Enqueue.payload/"+p.Name, func() error {
			enq, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "q", Payload: v})
			if err == nil {
				id = enq[0].Run.ID
			}
			return err
		}(), func() error {
			r, err := c.Run(ctx, id)
			require.NoError(t, err)
			return readsBack("payload", string(r.Payload), string(compactJSON(v)))
		})
		record("Client.EnqueueTx.payload/"+p.Name, func() error {
			enq, err := enqueueTx(ctx, c, d, leasehold.Enqueue{Queue: "q", Payload: v})
			if err == nil {
				id = enq[0].Run.ID
			}
			return err
		}(), func() error {
			r, err := c.Run(ctx, id)
			require.NoError(t, err)
			return readsBack("payload", string(r.Payload), string(compactJSON(v)))
		})
		w := world()
		record("Client.Append.payload/"+p.Name, func() error {
			_, err := c.Append(ctx, leasehold.AppendParams{World: w, Holder: "h", Epoch: 1, SeenPosition: 1, Kind: "note", Payload: v})
			return err
		}(), func() error {
			es, err := c.Read(ctx, w, 2, 1)
			require.NoError(t, err)
			return readsBack("payload", string(es[0].Payload), string(compactJSON(v)))
		})
	}

	// A handler's entry points: one run per (entry point, value), its
	// payload naming both; the handler makes the call and records it.
	type job struct {
		ep, name string
		str      string
		js       []byte
	}
	var jobs []job
	for _, s := range strs {
		jobs = append(jobs, job{ep: "RunHandle.Emit.kind", name: s.Name, str: s.Value}, job{ep: "RunHandle.Effect.key", name: s.Name, str: s.Value})
	}
	for _, p := range payloads {
		jobs = append(jobs, job{ep: "RunHandle.SetResult", name: p.Name, js: p.Value}, job{ep: "RunHandle.Emit.payload", name: p.Name, js: p.Value})
	}
	ids := map[int64]int{}
	for i := range jobs {
		enq, err := c.Enqueue(ctx, leasehold.Enqueue{Queue: "h", Payload: fmt.Appendf(nil, "%d", i), MaxAttempts: 1})
		require.NoError(t, err)
		ids[enq[0].Run.ID] = i
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	wg.Add(len(jobs))
	wk, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"h": 4}, ClockCheck: -1, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	wk.Handle("h", func(ctx context.Context, h *leasehold.RunHandle) error {
		defer wg.Done()
		i := ids[h.ID]
		j := jobs[i]
		switch j.ep {
		case "RunHandle.SetResult":
			errs[i] = h.SetResult(j.js)
		case "RunHandle.Emit.kind", "RunHandle.Emit.payload":
			kind, payload := j.str, j.js
			if j.ep == "RunHandle.Emit.payload" {
				kind = "k"
			}
			if errs[i] = h.Emit(ctx, kind, payload); errs[i] == nil {
				errs[i] = h.Step(ctx)
			}
		case "RunHandle.Effect.key":
			_, errs[i] = h.Effect(ctx, j.str, time.Second, func(context.Context, leasehold.EffectToken) ([]byte, error) { return []byte(`{}`), nil })
		}
		return nil
	})
	require.NoError(t, wk.Start(ctx))
	wg.Wait()
	require.NoError(t, wk.Stop(ctx))
	for id, i := range ids {
		j := jobs[i]
		record(j.ep+"/"+j.name, errs[i], func() error {
			switch j.ep {
			case "RunHandle.SetResult":
				r, err := c.Run(ctx, id)
				require.NoError(t, err)
				want := compactJSON(j.js)
				if len(j.js) == 0 {
					want = nil // no result
				}
				return readsBack("result", string(r.Result), string(want))
			case "RunHandle.Emit.kind", "RunHandle.Emit.payload":
				evs, err := c.Events(ctx, id, 0, 0, 10)
				require.NoError(t, err)
				if len(evs) != 1 {
					return fmt.Errorf("%d events", len(evs))
				}
				if j.ep == "RunHandle.Emit.kind" {
					return readsBack("kind", evs[0].Kind, j.str)
				}
				return readsBack("payload", string(evs[0].Payload), string(compactJSON(j.js)))
			default:
				effs, err := c.Driver().RunEffectList(ctx, &driver.RunEffectListParams{RunID: id})
				require.NoError(t, err)
				if len(effs) != 1 || effs[0].Key != j.str || !effs[0].Committed {
					return fmt.Errorf("effects %v, want %q committed", effs, j.str)
				}
				return nil
			}
		})
	}
	// Every entry point must both accept and refuse some value: one that
	// never accepts is wired wrong and would pass vacuously.
	eps := map[string][2]int{}
	for key, o := range out {
		ep, _, _ := strings.Cut(key, "/")
		n := eps[ep]
		if o == "accepted" {
			n[0]++
		} else {
			n[1]++
		}
		eps[ep] = n
	}
	for ep, n := range eps {
		require.True(t, n[0] > 0 && n[1] > 0, "%s: %d accepted, %d refused", ep, n[0], n[1])
	}
	t.Logf("hostile root %s: %d values × %d entry points = %d calls, untyped=%d roundtrip-failures=%d", d.Name(), len(strs)+len(payloads), len(eps), calls, untyped, failures)
	return out
}

// enqueueTx is one Client.EnqueueTx in a caller's transaction of its own,
// committed when accepted and rolled back when refused, as a caller would.
func enqueueTx(ctx context.Context, c *leasehold.Client, d leasehold.Driver, es ...leasehold.Enqueue) ([]leasehold.Enqueued, error) {
	tx, err := beginCallerTx(ctx, d)
	if err != nil {
		return nil, err
	}
	out, err := c.EnqueueTx(ctx, tx.tx, es...)
	if err != nil {
		_ = tx.rollback(ctx)
		return nil, err
	}
	return out, tx.commit(ctx)
}
