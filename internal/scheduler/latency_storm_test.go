package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// stormScale divides the run defaults and the faults of the latency storm
// (not faultScale: see TestLatencyStormWriteBehindKeepsEveryLease), and
// stormTerms is how many lease terms it lasts.
const (
	stormScale = 10
	stormTerms = 4
)

var stormTiming = func() lease.Timing {
	t := lease.RunDefaults()
	return lease.Timing{Lease: t.Lease / stormScale, Renew: t.Renew / stormScale, Drain: t.Drain / stormScale,
		Stop: t.Stop / stormScale, Skew: t.Skew / stormScale, Poll: t.Poll / stormScale, Margin: t.Margin / stormScale}
}()

// stormResult is what one mode suffered in the latency storm.
type stormResult struct {
	held                 int
	reclaimed, fencedOut int // from the store: runs taken from the live worker
	lost, selfStops      uint64
	flushes, flushErrors uint64
	maxLag               time.Duration
}

// TestLatencyStormWriteBehindKeepsEveryLease (SPEC §2; issue "write-behind
// lease keeper", must-show 2): one worker holds 100 long runs through a
// real TCP fault proxy to Postgres that adds 2 s per round trip (1 s each
// way) and stalls all traffic for 10 s once per lease term, for four lease
// terms — every timing and fault divided by stormScale. The reclaimer runs
// on its own direct connection, as on any replica.
//
// Why 10 s and a tenth: a holder's worst durable lag in the storm is one
// upkeep gap (T_renew + T_drain + a round trip) plus the stall plus a round
// trip — 15 + 5 + 2 + 10 + 2 = 34 s against D_stop 45 s. The earlier 20 s
// stall left 1 s of that margin, a thirtieth of which (33 ms) a machine
// running the whole suite under -race overran (max lag 1.90 s against
// D_stop 1.5 s): the test measured the machine, not the keeper. At a tenth
// the margin is 1.1 s.
//
// In writebehind no run of the live worker loses its lease: none is
// reclaimed, none is found lost by a flush, none stops itself. The same
// storm in sync mode, run beside it, is counted and logged: there each run
// renews with its own UPDATE through the reserved pool, the renewals queue
// behind the latency, fail on the acquire timeout, and leases lapse.
func TestLatencyStormWriteBehindKeepsEveryLease(t *testing.T) {
	t.Parallel()
	results := map[keeper.Mode]*stormResult{}
	var mu sync.Mutex
	t.Run("modes", func(t *testing.T) {
		for _, mode := range []keeper.Mode{keeper.ModeWriteBehind, keeper.ModeSync} {
			t.Run(mode.String(), func(t *testing.T) {
				t.Parallel()
				r := latencyStorm(t, mode)
				mu.Lock()
				results[mode] = r
				mu.Unlock()
			})
		}
	})
	for _, mode := range []keeper.Mode{keeper.ModeWriteBehind, keeper.ModeSync} {
		if r := results[mode]; r != nil {
			t.Logf("%-11s held %d runs for %d lease terms: reclaimed %d times, %d runs fenced out, lost %d, self-stopped %d; drains %d (failed %d); max durable lag at a confirmed renewal %v (D_stop %v)",
				mode, r.held, stormTerms, r.reclaimed, r.fencedOut, r.lost, r.selfStops, r.flushes, r.flushErrors, r.maxLag.Round(time.Millisecond), stormTiming.Stop)
		}
	}
	if r := results[keeper.ModeWriteBehind]; r != nil {
		require.Zero(t, r.reclaimed, "writebehind: a live worker's run was reclaimed")
		require.Zero(t, r.fencedOut)
		require.Zero(t, r.lost)
		require.Zero(t, r.selfStops)
	}
}

func latencyStorm(t *testing.T, mode keeper.Mode) *stormResult {
	const n = 100
	tm := stormTiming
	ctx := context.Background()
	direct, proxied, proxy := faultStores(t)
	quiet := slog.New(slog.DiscardHandler)
	es := make([]runs.Enqueue, n)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "storm", Payload: []byte(fmt.Sprint(i))}
	}
	_, err := direct.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
	require.NoError(t, err)

	reclaimed := &reclaimCounter{RunStore: direct}
	rec := scheduler.NewReclaimer(reclaimed, scheduler.ReclaimerConfig{Timing: tm, Logger: quiet})
	require.NoError(t, rec.Start(ctx))
	defer rec.Stop(context.Background())

	events := scheduler.NewEventCommitter(proxied, scheduler.EventCommitterConfig{Logger: quiet})
	require.NoError(t, events.Start(context.Background()))
	defer events.Stop(context.Background())
	w, err := scheduler.NewWorker(proxied, events, scheduler.WorkerConfig{Owner: "storm-" + mode.String(),
		Queues: map[string]int{"storm": n}, Timing: tm, Mode: mode, Logger: quiet})
	require.NoError(t, err)
	var holding atomic.Int64
	all := make(chan struct{})
	release := make(chan struct{})
	w.Handle("storm", func(ctx context.Context, r *scheduler.Run) error {
		if holding.Add(1) == n {
			close(all)
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	require.NoError(t, w.Start(ctx)) // the clock check runs before the storm
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		t.Fatalf("only %d of %d runs claimed", holding.Load(), n)
	}

	// The storm: latency on every byte, and a stall once per lease term.
	proxy.SetLatency(time.Second/stormScale, 0)
	stall := 10 * time.Second / stormScale
	end := time.Now().Add(stormTerms * tm.Lease)
	for time.Now().Before(end) {
		time.Sleep(tm.Lease - stall)
		proxy.Stall(stall)
		time.Sleep(stall)
	}
	proxy.SetLatency(0, 0)

	res := &stormResult{held: n, reclaimed: int(reclaimed.n.Load())}
	for id := int64(1); id <= n; id++ {
		r, err := direct.RunGet(ctx, &driver.RunGetParams{ID: id})
		require.NoError(t, err)
		if r.Fence != 1 {
			res.fencedOut++
		}
	}
	st := w.Keeper().Stats()
	res.lost, res.selfStops, res.flushes, res.flushErrors, res.maxLag = st.Lost, st.SelfStops, st.Flushes, st.FlushErrors, st.MaxLag
	close(release)
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, w.Stop(sctx))
	return res
}

// reclaimCounter counts the runs the reclaimer takes back.
type reclaimCounter struct {
	driver.RunStore
	n atomic.Int64
}

func (s *reclaimCounter) RunReclaim(ctx context.Context, p *driver.RunReclaimParams) (*driver.RunReclaimResult, error) {
	res, err := s.RunStore.RunReclaim(ctx, p)
	if err == nil {
		s.n.Add(int64(len(res.Reclaimed)))
	}
	return res, err
}
