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
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// TestFencesAfterALossyPromotion (SPEC §1, §6): every statement that
// issues a fence or an epoch — a run's claim, reclaim and cancel; a
// world's create, grant, handoff and sweep — issues, on a standby promoted
// after it lost writes, a value above every one the old primary issued for
// that run or world, including the ones lost with the window, and above
// the new timeline's floor; and they still grow by one from there. The
// worlds' journals audit clean with the jump. It runs as a role that is
// not a superuser, so the timeline read needs no privilege.
// Without the floor (TestFencesAfterALossyPromotionWithoutFloor, -tags
// simbugs) the claim lost with the window is handed out again.
func TestFencesAfterALossyPromotion(t *testing.T) {
	t.Parallel()
	h := lossyPromotionFences(t)
	require.Equal(t, int64(2), h.timeline, "one promotion: the second timeline")
	floor := postgres.FenceFloor(h.timeline)
	require.Empty(t, h.reissued(), "a fence issued before the promotion (lost or not) was issued again after it")
	require.Len(t, h.after, 5, "three runs and two worlds")
	for id, fs := range h.after {
		for i, f := range fs {
			require.Greater(t, f, floor, "%s: %d after the promotion is not above the floor %d", id, f, floor)
			if i > 0 {
				require.Equal(t, fs[i-1]+1, f, "%s: past the floor fences and epochs grow by one", id)
			}
		}
	}
	t.Logf("timeline %d, floor %d: fences and epochs before the promotion %v (of which lost with the window %v); after it %v",
		h.timeline, floor, h.before, h.lost, h.after)
}

// fenceHistory is every fence and epoch the driver issued per run ("run
// 1") and world ("world w"), before the promotion and after it.
type fenceHistory struct {
	timeline      int64
	before, after map[string][]int64
	lost          map[string][]int64 // the subset of before issued inside the window
}

// reissued lists the runs and worlds that got, after the promotion, a
// fence or epoch they already had before it.
func (h fenceHistory) reissued() []string {
	var out []string
	for id, fs := range h.after {
		had := map[int64]bool{}
		for _, f := range h.before[id] {
			had[f] = true
		}
		for _, f := range fs {
			if had[f] {
				out = append(out, fmt.Sprintf("%s: %d", id, f))
			}
		}
	}
	return out
}

// lossyPromotionFences drives the driver by hand through a lossy
// failover: claim one run and create a world, let the standby catch up,
// stop replication, then claim, reclaim and cancel, revoke and grant the
// world, create another — each issuing a fence or an epoch the kill
// loses —, kill the primary, promote the standby, and do it all again
// through the same multi-host URL. The store clock is a fake, so the
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

	h := fenceHistory{before: map[string][]int64{}, after: map[string][]int64{}, lost: map[string][]int64{}}
	promoted, inWindow := false, false
	record := func(id string, v int64) {
		if promoted {
			h.after[id] = append(h.after[id], v)
			return
		}
		h.before[id] = append(h.before[id], v)
		if inWindow {
			h.lost[id] = append(h.lost[id], v)
		}
	}
	note := func(r *driver.Run) { record(fmt.Sprintf("run %d", r.ID), r.Fence) }
	noteWorld := func(w *driver.World) { record("world "+w.World, w.Epoch) }
	create := func(world, holder string) {
		w, err := retried(ctx, func() (*driver.World, error) {
			return d.WorldCreate(ctx, &driver.WorldCreateParams{World: world, Home: "home", Holder: holder, Term: time.Hour})
		})
		require.NoError(t, err)
		noteWorld(w)
	}
	change := func(world, op string, plan func(s journal.State, now time.Time) (journal.Plan, error)) {
		w, err := retried(ctx, func() (*driver.World, error) {
			return d.LeaseChange(ctx, &driver.LeaseChangeParams{World: world, Op: op,
				Plan: func(w *driver.World, now time.Time) (journal.Plan, error) { return plan(w.State, now) }})
		})
		require.NoError(t, err)
		if op != "revoke" { // a revoke ends an epoch, starts none
			noteWorld(w)
		}
	}
	revokeAndGrant := func(world, to string) {
		change(world, "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanRevoke(s, now, s.Epoch, "test")
		})
		change(world, "grant", func(s journal.State, now time.Time) (journal.Plan, error) {
			return journal.PlanGrant(s, now, to, s.Epoch, time.Hour)
		})
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
	create("w", "h1")                   // epoch 1, on the standby too

	p.caughtUp(ctx)
	p.pauseReplication(ctx)
	inWindow = true
	require.Equal(t, b, claim(1)[0].ID) // fence 1, lost
	cancelRun(c)                        // fence 1, lost
	clk.Advance(2 * lease)
	reclaim(2)               // a and b: fence 2, lost
	revokeAndGrant("w", "x") // epoch 2 to x, lost
	create("w2", "y")        // epoch 1 to y, lost
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

	// w is back at epoch 1 held by h1; w2 does not exist.
	revokeAndGrant("w", "z")
	change("w", "handoff", func(s journal.State, now time.Time) (journal.Plan, error) {
		return journal.PlanHandoff(s, now, "z", "q", s.Epoch, time.Hour)
	})
	create("w2", "y2")
	for _, world := range []string{"w", "w2"} {
		es, err := retried(ctx, func() ([]journal.Entry, error) {
			return d.JournalRead(ctx, &driver.JournalReadParams{World: world, From: 1})
		})
		require.NoError(t, err)
		rep := journal.Audit(es)
		require.True(t, rep.OK(), "world %s does not audit after the promotion: %v", world, rep.Violation)
		wd, err := retried(ctx, func() (*driver.World, error) {
			return d.WorldGet(ctx, &driver.WorldGetParams{World: world})
		})
		require.NoError(t, err)
		require.True(t, rep.Final.Equal(wd.State), "world %s: head %s, fold %s", world, wd.State, rep.Final)
		require.Zero(t, wd.EpochFloor)
	}
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
