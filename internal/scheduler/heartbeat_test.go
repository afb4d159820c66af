package scheduler_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// goCounter counts the goroutines started under a name, and the calls
// made with After (the worker's first-beat timers).
type goCounter struct {
	rt.Runtime
	heartbeats atomic.Int64
	afters     atomic.Int64
	beats      atomic.Int64 // After calls of at most fastTiming.Renew: first-beat timers
}

func (g *goCounter) After(d time.Duration, f func()) rt.Stopper {
	g.afters.Add(1)
	if d <= fastTiming.Renew { // the completer's deadline is 2 × T_drain, longer
		g.beats.Add(1)
	}
	return g.Runtime.After(d, f)
}

// claimCounter counts the claims that returned runs.
type claimCounter struct {
	scheduler.Store
	claims atomic.Int64
}

func (c *claimCounter) RunClaim(ctx context.Context, p *driver.RunClaimParams) ([]*driver.Run, error) {
	out, err := c.Store.RunClaim(ctx, p)
	if len(out) > 0 {
		c.claims.Add(1)
	}
	return out, err
}

func (g *goCounter) Go(name string, fn func()) {
	if strings.HasSuffix(name, " heartbeat") {
		g.heartbeats.Add(1)
	}
	g.Runtime.Go(name, fn)
}

// drainWatch closes a run's channel once a drain that carried its lease
// returned: what a slow handler waits for instead of the wall clock.
type drainWatch struct {
	*renewCounter
	mu      sync.Mutex
	drained map[int64]chan struct{}
}

func (d *drainWatch) of(id int64) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	ch, ok := d.drained[id]
	if !ok {
		ch = make(chan struct{})
		d.drained[id] = ch
	}
	return ch
}

func (d *drainWatch) RunRenewMany(ctx context.Context, p *driver.RunRenewManyParams) (*driver.RunRenewManyResult, error) {
	out, err := d.renewCounter.RunRenewMany(ctx, p)
	if err == nil {
		for _, r := range p.Runs {
			ch := d.of(r.ID)
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
	}
	return out, err
}

// TestHeartbeatStartsAtTheFirstBeat: a run whose handler returns before
// its first beat is due (T_renew after the claim) starts no heartbeat
// goroutine; one that is still running then gets one, and renews. Each run
// used to start one with the handler, whatever it did.
func TestHeartbeatStartsAtTheFirstBeat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := storeKinds[0].open(t, clock.Real()) // sqlite
	counter := &renewCounter{Store: store}
	watch := &drainWatch{renewCounter: counter, drained: map[int64]chan struct{}{}}
	const quick, slow = 20, 2
	for range quick + slow {
		_, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{{Queue: "q"}}})
		require.NoError(t, err)
	}
	quiet := slog.New(slog.DiscardHandler)
	events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
	require.NoError(t, events.Start(ctx))
	defer events.Stop(ctx)
	g := &goCounter{Runtime: rt.Real(clock.Real())}
	// T_renew 1 s, not fastTiming's 150 ms: the first beat is due T_renew
	// after the claim was sent, so a claim whose round trip outlasted
	// T_renew on a loaded box gave every quick run a heartbeat (the bound
	// below read 22 of 22).
	tm := lease.Timing{Lease: 6 * time.Second, Renew: time.Second, Drain: 100 * time.Millisecond,
		Stop: 3 * time.Second, Skew: time.Second, Poll: 100 * time.Millisecond}
	w, err := scheduler.NewWorker(watch, events, scheduler.WorkerConfig{Queues: map[string]int{"q": quick + slow},
		Timing: tm, Runtime: g, Logger: quiet})
	require.NoError(t, err)
	var done sync.WaitGroup
	done.Add(quick + slow)
	w.Handle("q", func(ctx context.Context, r *scheduler.Run) error {
		defer done.Done()
		if r.ID > quick { // held until a drain renewed it: past its first beat
			select {
			case <-watch.of(r.ID):
			case <-ctx.Done():
			}
		}
		return nil
	})
	require.NoError(t, w.Start(ctx))
	done.Wait()
	require.NoError(t, w.Stop(ctx))
	for id := int64(1); id <= quick+slow; id++ {
		r, err := store.RunGet(ctx, &driver.RunGetParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, runs.StateCompleted, r.State)
	}
	// A quick handler may outlive T_renew on a loaded box: its run then
	// starts one too. The slow ones always do.
	require.GreaterOrEqual(t, g.heartbeats.Load(), int64(slow))
	require.Less(t, g.heartbeats.Load(), int64(quick), "a run done before its first beat starts no heartbeat")
	require.Positive(t, counter.drains.Load(), "the slow runs' beats reached the drain")
}

// TestRunsOfOneClaimShareOneTimer: the runs of one claim share one
// first-beat timer (beatGroup), where each run used to start one of its
// own: 100 runs enqueued at once and claimed by a worker with room for
// all of them make one After call per claim that returned runs, not one
// per run; every run completes.
func TestRunsOfOneClaimShareOneTimer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := storeKinds[0].open(t, clock.Real()) // sqlite
	const n = 100
	enqueueN(t, store, n)
	quiet := slog.New(slog.DiscardHandler)
	events := scheduler.NewEventCommitter(store, scheduler.EventCommitterConfig{Logger: quiet})
	require.NoError(t, events.Start(ctx))
	defer events.Stop(ctx)
	g := &goCounter{Runtime: rt.Real(clock.Real())}
	claims := &claimCounter{Store: store}
	w, err := scheduler.NewWorker(claims, events, scheduler.WorkerConfig{Queues: map[string]int{"q": n},
		Timing: fastTiming, Runtime: g, Logger: quiet})
	require.NoError(t, err)
	var done sync.WaitGroup
	done.Add(n)
	w.Handle("q", func(context.Context, *scheduler.Run) error {
		done.Done()
		return nil
	})
	require.NoError(t, w.Start(ctx))
	done.Wait()
	require.NoError(t, w.Stop(ctx))
	for id := int64(1); id <= n; id++ {
		r, err := store.RunGet(ctx, &driver.RunGetParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, runs.StateCompleted, r.State)
	}
	require.Positive(t, claims.claims.Load())
	require.Equal(t, claims.claims.Load(), g.beats.Load(), "one first-beat timer per claim")
	require.Less(t, g.beats.Load(), int64(n), "not one per run")
}

// timerCounter counts the timers made on its clock.
type timerCounter struct {
	clock.Clock
	timers atomic.Int64
}

func (c *timerCounter) NewTimer(d time.Duration) (clock.Timer, <-chan time.Time) {
	c.timers.Add(1)
	return c.Clock.NewTimer(d)
}

// TestCompletionsShareTheirDeadline: completions handed to the completer
// together wait under one shared deadline (sharedDeadline), where each
// used to make a timer of its own: 100 claimed runs completed at once
// make no timer on the clock and (at most a few) After calls, and all
// complete.
func TestCompletionsShareTheirDeadline(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, _ := storeKinds[0].open(t, clock.Real()) // sqlite
	const n = 100
	enqueueN(t, store, n)
	claimed, err := store.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "o", Limit: n, Lease: time.Minute})
	require.NoError(t, err)
	require.Len(t, claimed, n)
	cs := make([]driver.RunCompletion, n)
	for i, r := range claimed {
		cs[i] = driver.RunCompletion{ID: r.ID, Fence: r.Fence}
	}
	c := &timerCounter{Clock: clock.Real()}
	g := &goCounter{Runtime: rt.Real(c)}
	for i, err := range scheduler.CompleteEachForTest(ctx, store, c, g, cs) {
		require.NoError(t, err, "completion %d", i)
	}
	for _, r := range claimed {
		got, err := store.RunGet(ctx, &driver.RunGetParams{ID: r.ID})
		require.NoError(t, err)
		require.Equal(t, runs.StateCompleted, got.State)
	}
	require.Zero(t, c.timers.Load(), "no timer of its own per completion")
	// One shared deadline unless the 100 waits spread over more than
	// limit/64 (156ms) on a loaded box.
	require.Less(t, g.afters.Load(), int64(n/4), "a deadline shared, not one per completion")
}

// enqueueN enqueues n runs on queue q in one call.
func enqueueN(t *testing.T, store driver.RunStore, n int) {
	t.Helper()
	batch := make([]runs.Enqueue, n)
	for i := range batch {
		batch[i] = runs.Enqueue{Queue: "q"}
	}
	_, err := store.RunEnqueue(context.Background(), &driver.RunEnqueueParams{Runs: batch})
	require.NoError(t, err)
}
