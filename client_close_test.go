package leasehold_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/faultproxy"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/lease"
)

// closeSlack is what Close may take beyond Config.CloseTimeout: its 1s
// grace for the driver's own close, and scheduling on a loaded machine.
const closeSlack = 2 * time.Second

// closeTiming is a run timing scaled down so the worker's stop during the
// outage (handlers cancelled, final writes bounded by 2*T_drain) is quick.
var closeTiming = lease.Timing{Lease: 6 * time.Second, Renew: 500 * time.Millisecond, Drain: 250 * time.Millisecond,
	Stop: 3 * time.Second, Skew: time.Second, Poll: 200 * time.Millisecond}

// TestCloseDuringStoreOutage: Client.Close while the store does not answer
// returns within Config.CloseTimeout (default 5s) plus closeSlack, and
// loses no acknowledged event — every Emit a Step acknowledged before the
// outage is in the store afterwards, as is the append acknowledged before
// it. An event emitted during the outage is never acknowledged: its Step is
// failed back with ErrClosed when Close gives up on it; an append in flight
// during the outage returns an error by Close's deadline, and one after
// Close is refused with ErrClosed. Postgres goes out through the fault
// proxy (a blackhole; resets with new connections blackholed); SQLite by
// another process holding its write lock.
func TestCloseDuringStoreOutage(t *testing.T) {
	t.Parallel()
	for _, fault := range []struct {
		name  string
		store func(t *testing.T) outageStore
	}{
		{"postgres/blackhole", postgresOutage(func(p *faultproxy.Proxy) { p.SetBlackhole(true) })},
		{"postgres/connections reset, new ones blackholed", postgresOutage(func(p *faultproxy.Proxy) { p.SetBlackhole(true); p.ResetAll() })},
		{"sqlite/another process holds the write lock", sqliteOutage},
	} {
		t.Run(fault.name, func(t *testing.T) {
			t.Parallel()
			testCloseDuringOutage(t, fault.store(t))
		})
	}
}

// outageStore is a store whose outage a test can switch on and off.
type outageStore struct {
	open   func(ctx context.Context) (leasehold.Driver, error) // how the client under test opens it
	reopen func(ctx context.Context) (leasehold.Driver, error) // how the check opens it after the outage
	begin  func()                                              // starts the outage
	end    func()                                              // ends it
}

func postgresOutage(fault func(p *faultproxy.Proxy)) func(t *testing.T) outageStore {
	return func(t *testing.T) outageStore {
		return postgresStore(t, fault)
	}
}

// sqliteOutage: another connection takes SQLite's write lock and keeps it,
// so every write of the client waits (busy_timeout) and fails.
func sqliteOutage(t *testing.T) outageStore {
	path := filepath.Join(t.TempDir(), "lh.db")
	// A busy timeout, so its BEGIN IMMEDIATE waits out a write of the
	// client's in progress instead of failing at once.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	var conn *sql.Conn
	open := func(ctx context.Context) (leasehold.Driver, error) {
		return sqlite.Open(ctx, sqlite.Config{Path: path, Logger: slog.New(slog.DiscardHandler)})
	}
	return outageStore{open: open, reopen: open,
		begin: func() {
			conn, err = db.Conn(context.Background())
			require.NoError(t, err)
			_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
			require.NoError(t, err)
		},
		end: func() {
			_, err := conn.ExecContext(context.Background(), "ROLLBACK")
			require.NoError(t, err)
			require.NoError(t, conn.Close())
		}}
}

func postgresStore(t *testing.T, fault func(p *faultproxy.Proxy)) outageStore {
	dsn, schema := testdb.Schema(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	if strings.HasPrefix(u.Host, "/") || u.Host == "" {
		// The fault proxy is TCP only. Under CI the URL is TCP (.ci/run sets
		// it), so this can never pass silently there.
		if os.Getenv("CI") == "true" {
			t.Fatal("LEASEHOLD_TEST_DATABASE_URL is not TCP; the outage test needs the fault proxy")
		}
		t.Skip("Postgres is not on TCP; the fault proxy is TCP only")
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5432")
	}
	p, err := faultproxy.New(target)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	q := u.Query()
	q.Set("search_path", schema)
	direct := *u
	direct.RawQuery = q.Encode()
	proxied := direct
	proxied.Host = p.Addr()
	quiet := slog.New(slog.DiscardHandler)
	return outageStore{
		open: func(ctx context.Context) (leasehold.Driver, error) {
			return postgres.Open(ctx, postgres.Config{URL: proxied.String(), Logger: quiet})
		},
		reopen: func(ctx context.Context) (leasehold.Driver, error) {
			return postgres.Open(ctx, postgres.Config{URL: direct.String(), Logger: quiet})
		},
		begin: func() { fault(p) }, end: func() { p.SetBlackhole(false) }}
}

func testCloseDuringOutage(t *testing.T, st outageStore) {
	ctx := t.Context()
	quiet := slog.New(slog.DiscardHandler)
	d, err := st.open(ctx)
	require.NoError(t, err)
	c, err := leasehold.NewClient(ctx, d, leasehold.Config{Logger: quiet})
	require.NoError(t, err)
	require.NoError(t, c.StartReclaimer(ctx))
	require.NoError(t, c.StartSweeper(ctx))

	const runs, stepsBefore, perStep = 4, 10, 3
	var batch []leasehold.Enqueue
	for range runs {
		batch = append(batch, leasehold.Enqueue{Queue: "q"})
	}
	_, err = c.Enqueue(ctx, batch...)
	require.NoError(t, err)

	var mu sync.Mutex
	acked := map[int64]int64{} // run -> events its Steps acknowledged (seq 1..n under fence 1)
	ready := make(chan struct{}, runs)
	cut := make(chan struct{}) // closed once the outage is on
	late := make(chan error, runs)
	w, err := c.NewWorker(leasehold.WorkerConfig{Queues: map[string]int{"q": runs}, Timing: closeTiming,
		ClockCheck: -1, Logger: quiet})
	require.NoError(t, err)
	w.Handle("q", func(ctx context.Context, r *leasehold.RunHandle) error {
		for s := range stepsBefore {
			for e := range perStep {
				if err := r.Emit(ctx, "before", fmt.Appendf(nil, `{"step":%d,"e":%d}`, s, e)); err != nil {
					return err
				}
			}
			if err := r.Step(ctx); err != nil {
				return err
			}
			mu.Lock()
			acked[r.ID] += perStep
			mu.Unlock()
		}
		ready <- struct{}{}
		<-cut
		// Emitted during the outage: queued, never acknowledged. Its Step
		// waits without a deadline, so only Close can answer it.
		if err := r.Emit(ctx, "during", nil); err != nil {
			late <- err
			return err
		}
		go func() { late <- r.Step(context.Background()) }()
		<-ctx.Done()
		return ctx.Err()
	})
	require.NoError(t, w.Start(ctx))
	for range runs {
		<-ready
	}
	// A world appended to before the outage, and once during it.
	world, err := c.CreateWorld(ctx, "w", "home")
	require.NoError(t, err)
	appendOne := func(ctx context.Context) (int64, error) {
		return c.Append(ctx, leasehold.AppendParams{World: "w", Holder: "home", Epoch: world.Epoch,
			SeenPosition: world.GrantedAt, Kind: "x", Payload: []byte(`{}`)})
	}
	appended, err := appendOne(ctx)
	require.NoError(t, err)

	st.begin()
	close(cut)
	lateAppend := make(chan error, 1)
	go func() { _, err := appendOne(context.Background()); lateAppend <- err }()

	// Stop the worker first, as Close's doc asks; its handlers are cut
	// off by Stop's deadline and their final writes are bounded too.
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	_ = w.Stop(sctx)
	cancel()
	<-w.Stopped()

	start := time.Now()
	err = c.Close()
	took := time.Since(start)
	t.Logf("Close during the outage took %v (bound %v + %v)", took, leasehold.DefaultCloseTimeout, closeSlack)
	require.Less(t, took, leasehold.DefaultCloseTimeout+closeSlack)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the last flush could not finish: Close says so")
	for range runs {
		err := <-late
		require.ErrorIs(t, err, leasehold.ErrClosed, "an unacknowledged event is failed back, typed")
	}
	require.Error(t, <-lateAppend, "an append during the outage is answered by Close's deadline, not acknowledged")
	_, err = appendOne(ctx)
	require.ErrorIs(t, err, leasehold.ErrClosed)

	// Reopen directly: every acknowledged event is there.
	st.end()
	d2, err := st.reopen(ctx)
	require.NoError(t, err)
	c2, err := leasehold.NewClient(ctx, d2, leasehold.Config{Logger: quiet})
	require.NoError(t, err)
	defer c2.Close()
	entries, err := c2.Read(ctx, "w", appended, 1)
	require.NoError(t, err)
	require.Len(t, entries, 1, "the acknowledged append is there")
	require.Len(t, acked, runs)
	for id, n := range acked {
		evs, err := c2.Driver().RunEventList(ctx, &driver.RunEventListParams{RunID: id, Limit: 1000})
		require.NoError(t, err)
		have := map[int64]bool{}
		for _, ev := range evs {
			if ev.Fence == 1 {
				have[ev.Seq] = true
			}
		}
		for seq := int64(1); seq <= n; seq++ {
			require.True(t, have[seq], "run %d: acknowledged event %d lost", id, seq)
		}
	}
}
