package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/internal/witness"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// TestPartitionedWorkerSelfStopsAndAnotherTakesOver (SPEC §2, §5; issue
// "write-behind lease keeper", must-show 3): worker A reaches Postgres
// only through a real TCP fault proxy; after five effects the proxy
// blackholes A's connections — after A's fifth effect happened downstream
// and before A could commit it. A's drains go unanswered, its durable lag
// grows, and it stops itself (or its gate refuses) — invoking no effect
// after its runway ends. The reclaimer, on its own connection, takes the
// run back once the lease expired on the store clock, and worker B (its
// own pool, no proxy) claims it and runs the remaining effects. The
// witness — the downstream system, outside the ledger, rejecting lower
// fence tokens — sees each key accepted once; a key is invoked a second
// time only after B was told it was uncertain. The strand time, from the
// store's own timestamps, is within T_lease + P + S. Timings: the run
// defaults / faultScale.
func TestPartitionedWorkerSelfStopsAndAnotherTakesOver(t *testing.T) {
	t.Parallel()
	const steps = 40
	effectMax := 100 * time.Millisecond
	tm := faultTiming
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	direct, proxied, proxy := faultStores(t)
	quiet := slog.New(slog.DiscardHandler)
	enq, err := direct.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
	require.NoError(t, err)
	id := enq[0].Run.ID
	keyOf := func(step int) string { return fmt.Sprintf("step-%02d", step) }
	idem := func(step int) string { return fmt.Sprintf("%d:%s", id, keyOf(step)) } // EffectToken.IdempotencyKey

	wit := witness.New()
	type call struct {
		key   string
		fence int64
		at    time.Time
	}
	var mu sync.Mutex
	var aCalls []call
	uncertain := map[string]int{}

	reclaimed := make(chan *driver.Run, 4)
	rec := scheduler.NewReclaimer(reclaimSpy{direct, reclaimed}, scheduler.ReclaimerConfig{Timing: tm, Logger: quiet})
	require.NoError(t, rec.Start(ctx))
	defer rec.Stop(context.Background())

	// Worker A, through the proxy.
	aEvents := scheduler.NewEventCommitter(proxied, scheduler.EventCommitterConfig{Logger: quiet})
	require.NoError(t, aEvents.Start(context.Background()))
	defer aEvents.Stop(context.Background())
	a, err := scheduler.NewWorker(proxied, aEvents, scheduler.WorkerConfig{Owner: "worker-a", Queues: map[string]int{"q": 1},
		Timing: tm, Logger: quiet})
	require.NoError(t, err)
	fiveDone := make(chan struct{})
	var partitioned time.Time // written before fiveDone is closed
	aStopped := make(chan error, 1)
	a.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
		for i := range steps {
			_, err := r.Effect(ctx, keyOf(i), effectMax, func(ctx context.Context, tok scheduler.EffectToken) ([]byte, error) {
				mu.Lock()
				aCalls = append(aCalls, call{tok.IdempotencyKey, tok.Fence, time.Now()})
				mu.Unlock()
				err := wit.Invoke(tok.IdempotencyKey, tok.Fence)
				if i == 4 {
					// The partition, at a known point: after the fifth
					// effect happened downstream, before its commit, so
					// that B finds it uncertain.
					proxy.SetBlackhole(true)
					partitioned = time.Now()
					close(fiveDone)
				}
				return nil, err
			})
			if err != nil {
				aStopped <- fmt.Errorf("effect %d: %w (cause: %w)", i, err, context.Cause(ctx))
				return err
			}
			select {
			case <-time.After(30 * time.Millisecond):
			case <-ctx.Done():
				aStopped <- fmt.Errorf("between effects: %w", context.Cause(ctx))
				return ctx.Err()
			}
		}
		aStopped <- errors.New("worker A ran every step: the partition came too late")
		return nil
	})
	require.NoError(t, a.Start(ctx))
	defer func() {
		proxy.SetBlackhole(false)
		sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = a.Stop(sctx)
	}()

	// Worker B, on its own connections.
	bEvents := scheduler.NewEventCommitter(direct, scheduler.EventCommitterConfig{Logger: quiet})
	require.NoError(t, bEvents.Start(context.Background()))
	defer bEvents.Stop(context.Background())
	b, err := scheduler.NewWorker(direct, bEvents, scheduler.WorkerConfig{Owner: "worker-b", Queues: map[string]int{"q": 1},
		Timing: tm, Logger: quiet})
	require.NoError(t, err)
	bFence := make(chan int64, 1)
	b.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
		bFence <- r.Fence
		for i := range steps {
			for {
				_, err := r.Effect(ctx, keyOf(i), effectMax, func(ctx context.Context, tok scheduler.EffectToken) ([]byte, error) {
					return nil, wit.Invoke(tok.IdempotencyKey, tok.Fence)
				})
				var ue *scheduler.UncertainEffectError
				if errors.As(err, &ue) {
					// Reconcile with the downstream system by idempotency key.
					mu.Lock()
					uncertain[idem(i)]++
					mu.Unlock()
					if err := r.ResolveEffect(ctx, keyOf(i), wit.Reconcile(idem(i), r.Fence), nil); err != nil {
						return err
					}
					continue
				}
				if err != nil {
					return err
				}
				break
			}
		}
		return nil
	})
	require.NoError(t, b.Start(ctx))
	defer b.Stop(context.Background())

	// The partition.
	select {
	case <-fiveDone:
	case err := <-aStopped:
		t.Fatalf("worker A stopped before the partition: %v", err)
	case <-ctx.Done():
		t.Fatal("worker A did not get through five effects")
	}

	var aErr error
	select {
	case aErr = <-aStopped:
	case <-ctx.Done():
		t.Fatal("worker A did not stop")
	}
	stoppedAfter := time.Since(partitioned)
	require.True(t, errors.Is(aErr, lease.ErrLeaseLost) || errors.Is(aErr, lease.ErrLeaseRunway),
		"A stopped itself (self-stop or gate refusal), not by chance: %v", aErr)
	ast := a.Keeper().Stats()
	require.Positive(t, ast.SelfStops+ast.GateRefuse, "A's keeper decided the stop: %+v", ast)

	var r *driver.Run
	select {
	case r = <-reclaimed:
	case <-ctx.Done():
		t.Fatal("the run was not reclaimed")
	}
	require.Equal(t, id, r.ID)
	m := reclaimReason.FindStringSubmatch(r.Reason)
	require.NotNil(t, m, "reclaim reason %q", r.Reason)
	require.Equal(t, []string{"worker-a", "1"}, m[2:])
	lastExpiry, err := time.Parse(time.RFC3339Nano, m[1])
	require.NoError(t, err)
	lastRenewal := lastExpiry.Add(-tm.Lease)
	strand := r.ReclaimedAt.Sub(lastRenewal)
	bound := tm.Lease + tm.Poll + tm.Skew
	require.LessOrEqual(t, strand, bound, "stranded %v after the last renewal, past T_lease + P + S", strand)

	require.Eventually(t, func() bool {
		got, err := direct.RunGet(ctx, &driver.RunGetParams{ID: id})
		return err == nil && got.State == runs.StateCompleted
	}, 30*time.Second, 10*time.Millisecond, "worker B completes the run")
	require.Equal(t, int64(3), <-bFence, "claim 1, reclaim 2, B's claim 3")
	require.Equal(t, map[string]int{idem(4): 1}, uncertain, "B is told of the effect A started and never committed")

	// A invoked nothing once its runway was over: every call came before
	// lastExpiry - S, the latest its runway can end (it counts from the
	// send of the write that set lastExpiry, which is no later than the
	// store's instant of writing it — one machine, one clock).
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, aCalls)
	runwayEnd := lastExpiry.Add(-tm.Skew)
	var lastA time.Time
	for _, c := range aCalls {
		require.Equal(t, int64(1), c.fence)
		require.True(t, c.at.Before(runwayEnd), "A invoked %s at %v, after its runway ended at %v", c.key, c.at, runwayEnd)
		lastA = c.at
	}
	// Each key accepted once; a second invocation only after an uncertain report.
	accepted := wit.Accepted()
	calls := map[string]int{}
	for _, in := range wit.Invocations() {
		calls[in.Key]++
	}
	for i := range steps {
		k := idem(i)
		require.Equal(t, 1, accepted[k], "key %s accepted once", k)
		if calls[k] > 1 {
			require.Positive(t, uncertain[k], "key %s invoked %d times without an uncertain report", k, calls[k])
		}
	}
	t.Logf("A: %d effects, partitioned, stopped %v later (%v), last effect %v before its runway's end; B: fence 3, %d effects, %d uncertain; strand %v after the last renewal (bound T_lease+P+S = %v), store times: expiry %s, reclaim %s",
		len(aCalls), stoppedAfter.Round(time.Millisecond), aErr, runwayEnd.Sub(lastA).Round(time.Millisecond),
		steps-len(aCalls), len(uncertain), strand.Round(time.Millisecond), bound,
		lastExpiry.Format(time.RFC3339Nano), r.ReclaimedAt.Format(time.RFC3339Nano))
}
