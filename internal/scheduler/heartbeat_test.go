package scheduler_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/runs"
)

// goCounter counts the goroutines started under a name.
type goCounter struct {
	rt.Runtime
	heartbeats atomic.Int64
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
	w, err := scheduler.NewWorker(watch, events, scheduler.WorkerConfig{Queues: map[string]int{"q": quick + slow},
		Timing: fastTiming, Runtime: g, Logger: quiet})
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
