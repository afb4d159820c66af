package failover

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/runs"
)

// TestFencesAfterALossyPromotion (SPEC §1, §6): every statement that
// issues a fence — claim, reclaim, cancel — issues, on a standby promoted
// after it lost writes, a fence above every fence the old primary issued
// for that run, including the ones lost with the window, and above the new
// timeline's floor; and fences still grow by one from there. It runs as a
// role that is not a superuser, so the timeline read needs no privilege.
// Without the floor (TestFencesAfterALossyPromotionWithoutFloor, -tags
// simbugs) the claim lost with the window is handed out again.
func TestFencesAfterALossyPromotion(t *testing.T) {
	t.Parallel()
	h := lossyPromotionFences(t)
	require.Equal(t, int64(2), h.timeline, "one promotion: the second timeline")
	floor := postgres.FenceFloor(h.timeline)
	require.Empty(t, h.reissued(), "a fence issued before the promotion (lost or not) was issued again after it")
	for id, fs := range h.after {
		for i, f := range fs {
			require.Greater(t, f, floor, "run %d: fence %d after the promotion is not above the floor %d", id, f, floor)
			if i > 0 {
				require.Equal(t, fs[i-1]+1, f, "run %d: past the floor fences grow by one", id)
			}
		}
	}
	t.Logf("timeline %d, floor %d: fences per run before the promotion %v (of which lost with the window %v); after it %v",
		h.timeline, floor, h.before, h.lost, h.after)
}

// fenceHistory is every fence the driver issued per run, before the
// promotion and after it.
type fenceHistory struct {
	timeline      int64
	before, after map[int64][]int64
	lost          map[int64][]int64 // the subset of before issued inside the window
}

// reissued lists the runs that got, after the promotion, a fence they
// already had before it.
func (h fenceHistory) reissued() []string {
	var out []string
	for id, fs := range h.after {
		had := map[int64]bool{}
		for _, f := range h.before[id] {
			had[f] = true
		}
		for _, f := range fs {
			if had[f] {
				out = append(out, fmt.Sprintf("run %d fence %d", id, f))
			}
		}
	}
	return out
}

// lossyPromotionFences drives the driver by hand through a lossy
// failover: claim one run, let the standby catch up, stop replication,
// then claim, reclaim and cancel — each issuing a fence the kill loses —,
// kill the primary, promote the standby, and claim, reclaim and cancel
// again through the same multi-host URL. The store clock is a fake, so the
// reclaim is due when the test says.
func lossyPromotionFences(t *testing.T) fenceHistory {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*patience)
	defer cancel()
	p := newPair(t, false)
	// A role that is not a superuser, owning its database: what an
	// application connects as.
	pc, err := pgx.Connect(ctx, p.primary.URL())
	require.NoError(t, err)
	for _, q := range []string{"CREATE ROLE app LOGIN NOSUPERUSER", "CREATE DATABASE app OWNER app"} {
		_, err := pc.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	require.NoError(t, pc.Close(ctx))
	url := fmt.Sprintf("postgres://app@%s,%s/app?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		p.primary.Addr(), p.standby.Addr())

	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	d, err := postgres.Open(ctx, postgres.Config{URL: url, StoreClock: clk, Logger: slog.New(slog.DiscardHandler),
		AcquireTimeout: 500 * time.Millisecond, StatementTimeout: time.Second})
	require.NoError(t, err)
	defer d.Close()
	_, err = d.Migrate(ctx)
	require.NoError(t, err)

	h := fenceHistory{before: map[int64][]int64{}, after: map[int64][]int64{}, lost: map[int64][]int64{}}
	promoted, inWindow := false, false
	note := func(r *driver.Run) {
		if promoted {
			h.after[r.ID] = append(h.after[r.ID], r.Fence)
			return
		}
		h.before[r.ID] = append(h.before[r.ID], r.Fence)
		if inWindow {
			h.lost[r.ID] = append(h.lost[r.ID], r.Fence)
		}
	}
	const lease = time.Minute
	claim := func(n int) []*driver.Run {
		rs, err := retried(ctx, func() ([]*driver.Run, error) {
			return d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "w", Limit: n, Lease: lease})
		})
		require.NoError(t, err)
		require.Len(t, rs, n)
		for _, r := range rs {
			note(r)
		}
		return rs
	}
	reclaim := func(n int) {
		res, err := retried(ctx, func() (*driver.RunReclaimResult, error) {
			return d.RunReclaim(ctx, &driver.RunReclaimParams{Limit: 10})
		})
		require.NoError(t, err)
		require.Len(t, res.Reclaimed, n)
		for _, r := range res.Reclaimed {
			note(r)
		}
	}
	cancelRun := func(id int64) {
		r, err := retried(ctx, func() (*driver.Run, error) {
			return d.RunCancel(ctx, &driver.RunCancelParams{ID: id, Reason: "test"})
		})
		require.NoError(t, err)
		note(r)
	}

	enq, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: []runs.Enqueue{
		{Queue: "q", Payload: []byte(`{"n":1}`)}, {Queue: "q", Payload: []byte(`{"n":2}`)}, {Queue: "q", Payload: []byte(`{"n":3}`)}}})
	require.NoError(t, err)
	a, b, c := enq[0].Run.ID, enq[1].Run.ID, enq[2].Run.ID
	require.Equal(t, a, claim(1)[0].ID) // fence 1, on the standby too

	p.caughtUp(ctx)
	p.pauseReplication(ctx)
	inWindow = true
	require.Equal(t, b, claim(1)[0].ID) // fence 1, lost
	cancelRun(c)                        // fence 1, lost
	clk.Advance(2 * lease)
	reclaim(2) // a and b: fence 2, lost
	inWindow = false

	_, _ = p.failover(ctx)
	promoted = true

	// The timeline as the application's role reads it, and what
	// pg_control_checkpoint() says (the last checkpoint's timeline, which
	// may still be the old one right after a promotion: fencefloor.go).
	sc, err := pgx.Connect(ctx, fmt.Sprintf("postgres://app@%s/app?sslmode=disable", p.standby.Addr()))
	require.NoError(t, err)
	defer func() { _ = sc.Close(context.Background()) }()
	require.NoError(t, sc.QueryRow(ctx,
		"SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint").Scan(&h.timeline))
	var checkpointTL int64
	err = sc.QueryRow(ctx, "SELECT timeline_id FROM pg_control_checkpoint()").Scan(&checkpointTL)
	t.Logf("right after the promotion: WAL insert timeline %d; pg_control_checkpoint(): timeline %d, err %v", h.timeline, checkpointTL, err)

	// The promoted standby holds a running under fence 1 (lease expired on
	// the fake clock), b available at 0, c available at 0.
	reclaim(1)   // a
	claim(3)     // a, b, c
	cancelRun(b) // past the floor: +1
	clk.Advance(2 * lease)
	reclaim(2) // a, c
	return h
}

// retried calls fn until it succeeds or ctx ends: right after the
// promotion the pool's connections to the dead primary fail once each
// before pgx connects to the new one. Bounded polling, not a sleep to
// wait for something.
func retried[T any](ctx context.Context, fn func() (T, error)) (T, error) {
	for {
		v, err := fn()
		if err == nil || ctx.Err() != nil {
			return v, err
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return v, err
		}
	}
}
