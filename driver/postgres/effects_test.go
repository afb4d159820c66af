package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/runs"
)

// claimFor enqueues n runs on queue q and claims them for owner.
func claimFor(t *testing.T, d *Driver, owner string, n int) []*driver.Run {
	t.Helper()
	ctx := context.Background()
	es := make([]runs.Enqueue, n)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "q"}
	}
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
	require.NoError(t, err)
	got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: owner, Limit: n, Lease: runTerm})
	require.NoError(t, err)
	require.Len(t, got, n)
	return got
}

// reclaimFor expires every lease, reclaims and claims r again for owner.
func reclaimFor(t *testing.T, d *Driver, fake *clock.Fake, r *driver.Run, owner string) *driver.Run {
	t.Helper()
	ctx := context.Background()
	fake.Advance(runTerm)
	_, err := d.RunReclaim(ctx, &driver.RunReclaimParams{})
	require.NoError(t, err)
	got, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: owner, Limit: 1, Lease: runTerm})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, r.ID, got[0].ID)
	return got[0]
}

// TestRunTxHoldsTheRunAgainstCancel: the FOR SHARE fence check is held to
// commit, so a cancel (an UPDATE of the run row) waits for the
// transaction, and the transaction's effect commits under the fence it
// checked.
func TestRunTxHoldsTheRunAgainstCancel(t *testing.T) {
	t.Parallel()
	d, _ := openRuns(t, Config{})
	ctx := context.Background()
	r := claimFor(t, d, "a", 1)[0]

	inFn, release := make(chan int32), make(chan struct{})
	txDone := make(chan error, 1)
	go func() {
		_, err := d.RunTx(ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: "k"}, func(tx any) error {
			var pid int32
			if err := tx.(pgx.Tx).QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				return err
			}
			inFn <- pid
			<-release
			return nil
		})
		txDone <- err
	}()
	pid := <-inFn

	cancelled := make(chan error, 1)
	go func() {
		_, err := d.RunCancel(ctx, &driver.RunCancelParams{ID: r.ID, Reason: "operator"})
		cancelled <- err
	}()
	// The server is the only one who knows the cancel is waiting.
	require.Eventually(t, func() bool {
		var n int
		err := d.s.general.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, pid).Scan(&n)
		return err == nil && n == 1
	}, 10*time.Second, 5*time.Millisecond, "the cancel waits for the transaction's lock")
	select {
	case err := <-cancelled:
		t.Fatalf("cancel returned while the transaction held the run: %v", err)
	default:
	}
	close(release)
	require.NoError(t, <-txDone)
	require.NoError(t, <-cancelled)

	got, err := d.RunGet(ctx, &driver.RunGetParams{ID: r.ID})
	require.NoError(t, err)
	require.Equal(t, runs.StateCancelled, got.State)
	require.Equal(t, r.Fence+1, got.Fence)
	list, err := d.RunEffectList(ctx, &driver.RunEffectListParams{RunID: r.ID})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.True(t, list[0].Committed)
	require.Equal(t, r.Fence, list[0].Fence)
}

// TestRoundTripsPerEffectOp pins the cost of the effect and event paths on
// a warm connection, and that no refusal leaves a transaction open (each
// pool's one connection is reused, never discarded).
func TestRoundTripsPerEffectOp(t *testing.T) {
	t.Parallel()
	url, schema := testdb.Schema(t)
	fake := clock.NewFake(drivertest.StartTime)
	cfg := Config{URL: url, Schema: schema, CriticalConns: 1, GeneralConns: 1, StoreClock: fake}
	ctx := context.Background()
	d, writes := openCounting(t, cfg)
	var err error
	_, err = d.s.general.Exec(ctx, `CREATE TABLE ledger (n bigint)`)
	require.NoError(t, err)
	rs := claimFor(t, d, "a", 2)
	r, gone := rs[0], rs[1]
	_, err = d.RunCancel(ctx, &driver.RunCancelParams{ID: gone.ID})
	require.NoError(t, err)

	n := 0
	key := func() string { n++; return fmt.Sprint("k", n) }
	begin := func(k string) {
		e, err := d.RunEffectBegin(ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: k})
		require.NoError(t, err)
		require.Equal(t, driver.EffectStarted, e.Outcome)
	}
	commit := func(k string) {
		_, err := d.RunEffectCommit(ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: k, Result: []byte(`1`)})
		require.NoError(t, err)
	}
	var lastKey string
	tx := func(fn func(any) error) func() {
		return func() {
			lastKey = key()
			_, err := d.RunTx(ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: lastKey}, fn)
			require.NoError(t, err)
		}
	}
	writeOne := func(tx any) error {
		_, err := tx.(pgx.Tx).Exec(ctx, `INSERT INTO ledger (n) VALUES ($1)`, n)
		return err
	}
	seq := int64(0)
	var lastBatch []driver.RunEventInsert
	events := func(fenced int) func() {
		return func() {
			var b []driver.RunEventInsert
			for range 10 {
				seq++
				b = append(b, driver.RunEventInsert{RunID: r.ID, Fence: r.Fence, Seq: seq, Kind: "k", Payload: []byte(`{}`)})
			}
			for i := range fenced {
				b = append(b, driver.RunEventInsert{RunID: gone.ID, Fence: gone.Fence, Seq: int64(i + 1), Kind: "k"})
			}
			res, err := d.RunEventAppend(ctx, &driver.RunEventAppendParams{Events: b})
			require.NoError(t, err)
			require.Len(t, res.Fenced, fenced)
			lastBatch = b
		}
	}
	retried := func() {
		res, err := d.RunEventAppend(ctx, &driver.RunEventAppendParams{Events: lastBatch})
		require.NoError(t, err)
		require.Len(t, res.Fenced, 3)
	}
	for _, c := range []struct {
		name  string
		op    func()
		trips int64
	}{
		{"effect begin", func() { begin(key()) }, 1},
		{"effect commit", func() { k := key(); begin(k); commit(k) }, 2},
		{"effect begin, committed", func() {
			e, err := d.RunEffectBegin(ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "k3"})
			require.NoError(t, err)
			require.Equal(t, driver.EffectCommitted, e.Outcome)
		}, 1},
		{"refused effect begin", func() {
			_, err := d.RunEffectBegin(ctx, &driver.RunEffectParams{RunID: gone.ID, Fence: gone.Fence, Key: "x"})
			require.ErrorIs(t, err, driver.ErrFenced)
		}, 2},
		{"refused effect commit", func() {
			_, err := d.RunEffectCommit(ctx, &driver.RunEffectCommitParams{RunID: r.ID, Fence: r.Fence, Key: "k3"})
			require.ErrorIs(t, err, driver.ErrConflict)
		}, 2},
		{"effect list", func() {
			_, err := d.RunEffectList(ctx, &driver.RunEffectListParams{RunID: r.ID})
			require.NoError(t, err)
		}, 1},
		{"tx: BEGIN, fence check and effect, COMMIT", tx(func(any) error { return nil }), 3},
		{"tx with one caller write", tx(writeOne), 4},
		{"tx, key done", func() {
			res, err := d.RunTx(ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: lastKey}, writeOne)
			require.NoError(t, err)
			require.True(t, res.Done)
		}, 3},
		{"refused tx (BEGIN, check, ROLLBACK, read)", func() {
			_, err := d.RunTx(ctx, &driver.RunTxParams{RunID: gone.ID, Fence: gone.Fence, Key: "x"}, writeOne)
			require.ErrorIs(t, err, driver.ErrFenced)
		}, 4},
		{"tx whose fn moved its run (BEGIN, check and effect, fn, the refused check and COMMIT, ROLLBACK)", func() {
			_, err := d.RunTx(ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: key()}, func(tx any) error {
				_, err := tx.(pgx.Tx).Exec(ctx, "UPDATE runs SET state = 'blocked' WHERE id = $1", r.ID)
				return err
			})
			require.ErrorIs(t, err, driver.ErrFenced)
		}, 5},
		{"failed tx (fn's error, ROLLBACK)", func() {
			_, err := d.RunTx(ctx, &driver.RunTxParams{RunID: r.ID, Fence: r.Fence, Key: key()}, func(any) error { return errors.New("no") })
			require.Error(t, err)
		}, 3},
		{"event batch", events(0), 1},
		{"event batch with fenced events", events(3), 2},
		// The plain insert refused, the idempotent one, which are fenced;
		// and, as pgx drops a cached statement that failed, deallocating
		// and preparing the plain insert again before it.
		{"retried event batch", retried, 5},
		{"event list", func() {
			_, err := d.RunEventList(ctx, &driver.RunEventListParams{RunID: r.ID, Limit: 5})
			require.NoError(t, err)
		}, 1},
	} {
		c.op() // warm: prepares the statements on the pool's one connection
		before := writes.Load()
		c.op()
		require.Equal(t, c.trips, writes.Load()-before, c.name)
	}
	for _, pool := range []*pgxpool.Pool{d.s.critical, d.s.general} {
		st := pool.Stat()
		require.Equal(t, int32(1), st.TotalConns(), "the one connection was reused")
		require.Zero(t, st.AcquiredConns(), "nothing left acquired")
		require.Equal(t, int64(1), st.NewConnsCount(), "never discarded and reopened")
	}
}

// TestEffectBeginWaitsOutAnUncommittedInsert drives the lost insert race
// deterministically: another transaction holds an uncommitted intent of
// the key, so the begin's ON CONFLICT waits for it. If it commits, the
// begin (whose snapshot predates it) repeats and finds the intent
// uncertain; if it rolls back, the begin inserts its own.
func TestEffectBeginWaitsOutAnUncommittedInsert(t *testing.T) {
	t.Parallel()
	for _, commit := range []bool{true, false} {
		t.Run(map[bool]string{true: "commit", false: "rollback"}[commit], func(t *testing.T) {
			t.Parallel()
			d, _ := openRuns(t, Config{})
			ctx := context.Background()
			r := claimFor(t, d, "a", 1)[0]
			other, err := d.s.general.Begin(ctx)
			require.NoError(t, err)
			defer other.Rollback(ctx) //nolint:errcheck // a no-op after Commit
			var pid int32
			require.NoError(t, other.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
			_, err = other.Exec(ctx, `INSERT INTO run_effects (run_id, key, fence, created_at) VALUES ($1, 'k', $2, now())`, r.ID, r.Fence)
			require.NoError(t, err)

			type result struct {
				e   *driver.Effect
				err error
			}
			began := make(chan result, 1)
			go func() {
				e, err := d.RunEffectBegin(ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "k"})
				began <- result{e, err}
			}()
			require.Eventually(t, func() bool {
				var n int
				err := d.s.general.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))`, pid).Scan(&n)
				return err == nil && n == 1
			}, 10*time.Second, 5*time.Millisecond, "the begin waits for the other insert")
			want := driver.EffectStarted
			if commit {
				require.NoError(t, other.Commit(ctx))
				want = driver.EffectUncertain
			} else {
				require.NoError(t, other.Rollback(ctx))
			}
			got := <-began
			require.NoError(t, got.err)
			require.Equal(t, want, got.e.Outcome)
		})
	}
}
