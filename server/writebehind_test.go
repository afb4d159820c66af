package server_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
	"github.com/leasehold/leasehold/server"
)

// countingDriver counts the heartbeat statements a server makes: each
// RunRenew is one statement, each RunRenewMany one drain (one statement on
// Postgres, one transaction on SQLite). drained receives the rows of each
// drain.
type countingDriver struct {
	driver.Driver
	renews, drains atomic.Int64
	drained        chan int
}

func (d *countingDriver) RunRenew(ctx context.Context, p *driver.RunRenewParams) (*driver.Run, error) {
	d.renews.Add(1)
	return d.Driver.RunRenew(ctx, p)
}

func (d *countingDriver) RunRenewMany(ctx context.Context, p *driver.RunRenewManyParams) (*driver.RunRenewManyResult, error) {
	d.drains.Add(1)
	res, err := d.Driver.RunRenewMany(ctx, p)
	if err == nil {
		d.drained <- len(res.Renewed)
	}
	return res, err
}

// fastTiming is a run timing scaled down so a drain comes every 50ms.
var fastTiming = lease.Timing{Lease: 6 * time.Second, Renew: time.Second, Drain: 50 * time.Millisecond,
	Stop: 3 * time.Second, Skew: time.Second, Poll: time.Second, Margin: 50 * time.Millisecond}

// longLeases drain every 50ms of the server's (fake) clock while the
// leases last ten minutes of the store's real one: however slow the
// machine, no lease expires during the test.
var longLeases = lease.Timing{Lease: 10 * time.Minute, Renew: time.Minute, Drain: 50 * time.Millisecond,
	Stop: 5 * time.Minute, Skew: time.Minute, Poll: time.Second, Margin: 50 * time.Millisecond}

// remoteHeartbeats has n remote runners, each holding one run under its
// own owner, renew through the API for rounds rounds; after each round
// the server's clock (a fake one) moves one T_drain, so its drain runs
// once, and the round waits for it. It returns the heartbeat statements
// the server made and the renew calls it answered.
func remoteHeartbeats(t *testing.T, open func(t *testing.T) leasehold.Driver, n, rounds int) (statements, calls int64, took time.Duration) {
	cd := &countingDriver{drained: make(chan int, 1024)}
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	b := setup(t, func(t *testing.T) leasehold.Driver { cd.Driver = open(t); return cd },
		leasehold.Config{}, server.Config{Timing: longLeases, Clock: clk})
	held := make([]run, n)
	for i := range n {
		b.enqueue(t, "q", `{}`)
		held[i] = b.claimOne(t, "q", fmt.Sprintf("runner-%d", i))
	}
	start := time.Now()
	renewed := 0
	for r := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				var got struct {
					RunwayMS int64  `json:"runway_ms"`
					Renewal  string `json:"renewal"`
				}
				reply := b.post(t, runPath(held[i].ID, "/renew"), map[string]any{"fence": held[i].Fence, "owner": fmt.Sprintf("runner-%d", i)})
				reply.ok(t, &got)
				if got.Renewal != "writebehind" || got.RunwayMS <= 0 {
					errs <- fmt.Errorf("runner %d: %+v", i, got)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		calls += int64(n)
		clk.BlockUntil(1) // the drain waits on its timer
		clk.Advance(longLeases.Drain)
		renewed += <-cd.drained
		require.Equal(t, n*(r+1), renewed, "one drain renewed every runner's lease")
	}
	took = time.Since(start)
	require.Zero(t, cd.renews.Load(), "no renewal was made synchronously")
	for i := range held {
		got := b.c.Driver()
		r, err := got.RunGet(context.Background(), &driver.RunGetParams{ID: held[i].ID})
		require.NoError(t, err)
		require.Equal(t, runs.StateRunning, r.State)
	}
	return cd.drains.Load(), calls, took
}

// TestRemoteRenewalsAreCoalescedByTheServersKeeper: remote runners'
// renewals are write-behind — each answered with no store call, with the
// runway the server vouches for — and one drain per T_drain renews all of
// them in one statement: 10 rounds (10 T_drain) of heartbeats from 4
// runners and from 40 runners cost the same 10 statements, though the
// second made ten times the calls.
func TestRemoteRenewalsAreCoalescedByTheServersKeeper(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		const rounds = 10
		for _, n := range []int{4, 40} {
			st, calls, took := remoteHeartbeats(t, open, n, rounds)
			t.Logf("%d remote runners: %d renew calls answered over %d T_drain, %d heartbeat statements (wall time %v)",
				n, calls, rounds, st, took.Round(time.Millisecond))
			require.Equal(t, int64(rounds), st, "%d runners: one statement per T_drain", n)
			require.Equal(t, int64(n*rounds), calls)
		}
	})
}

// TestARemoteLeaseTheDrainFindsLostIsRefusedNext: a run cancelled under
// a remote runner is renewed write-behind once (the server cannot know
// yet); the drain finds the lease lost, and the runner's next renewal is
// made synchronously and refused — lease lost or fenced, nothing changed.
func TestARemoteLeaseTheDrainFindsLostIsRefusedNext(t *testing.T) {
	eachStore(t, func(t *testing.T, open func(t *testing.T) leasehold.Driver) {
		cd := &countingDriver{drained: make(chan int, 16)}
		b := setup(t, func(t *testing.T) leasehold.Driver { cd.Driver = open(t); return cd },
			leasehold.Config{}, server.Config{Timing: fastTiming})
		b.enqueue(t, "q", `{}`)
		held := b.claimOne(t, "q", "runner-1")
		b.post(t, runPath(held.ID, "/cancel"), map[string]any{"reason": "operator"}).ok(t, &struct{}{})
		var got struct{ Renewal string }
		body := map[string]any{"fence": held.Fence, "owner": "runner-1"}
		b.post(t, runPath(held.ID, "/renew"), body).ok(t, &got)
		require.Equal(t, "writebehind", got.Renewal)
		require.Zero(t, <-cd.drained, "the drain renewed nothing: the lease is lost")
		before := b.snapshot(t, held.ID)
		b.post(t, runPath(held.ID, "/renew"), body).problem(t, "fenced")
		require.Equal(t, before, b.snapshot(t, held.ID))
		require.Equal(t, int64(1), cd.renews.Load(), "the refused renewal was synchronous")
	})
}
