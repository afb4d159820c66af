package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// hookClock is the real clock whose next Now runs the armed hook first.
type hookClock struct {
	clock.Clock
	hook atomic.Pointer[func()]
}

func (c *hookClock) Now() time.Time {
	if f := c.hook.Swap(nil); f != nil {
		(*f)()
	}
	return c.Clock.Now()
}

// TestDirectAppendEndsWithItsContext: a remembered-head append runs on the
// writer's driver connection (changeDirect) with only BEGIN under the
// caller's context; a context that ends once the write lock is held (the
// store clock is read right after BEGIN) still ends the append with
// nothing written, as database/sql's Commit would, and leaves the
// connection out of the transaction for the next append.
func TestDirectAppendEndsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var n atomic.Int64
	clk := &hookClock{Clock: clock.Real()}
	d, err := OpenEngine(ctx, Config{Path: filepath.Join(t.TempDir(), "direct.db"), Clock: clk}, countedEngine(&n))
	require.NoError(t, err)
	defer d.Close()
	req := migratedWorld(t, d)
	appendOne := func(ctx context.Context) (journal.AppendOutcome, error) { return appendOneTo(ctx, d, req) }
	got, err := appendOne(ctx) // reads the head; remembered from here on
	require.NoError(t, err)
	require.Equal(t, int64(2), got.Position)

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	end := func() { cancel() }
	clk.hook.Store(&end)
	n0 := n.Load()
	_, err = appendOne(cctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, int64(5), n.Load()-n0, "busy_timeout 0, BEGIN, busy_timeout back, guarded INSERT, ROLLBACK: the context ended under the lock")

	es, err := d.JournalRead(ctx, &driver.JournalReadParams{World: "w", From: 1, Limit: 10})
	require.NoError(t, err)
	require.Len(t, es, 2, "nothing written")
	got, err = appendOne(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), got.Position)
}

// TestDirectAppendFailureRollsBack: an INSERT that fails in a
// remembered-head append after its guarded first INSERT wrote (here the
// batch's second entry, refused by a trigger put there behind the store's
// back) fails the append and rolls the first entry back: another
// connection can write at once (the write lock is free), the journal ends
// where it did, and the next append takes the next position.
func TestDirectAppendFailureRollsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "direct.db")
	d, err := Open(ctx, Config{Path: path})
	require.NoError(t, err)
	defer d.Close()
	req := migratedWorld(t, d)
	got, err := appendOneTo(ctx, d, req)
	require.NoError(t, err)
	require.Equal(t, int64(2), got.Position)

	db, err := sql.Open("sqlite", moderncDSN(path, 200*time.Millisecond, false))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `CREATE TRIGGER boom BEFORE INSERT ON journal_entries
		WHEN NEW.kind = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END`)
	require.NoError(t, err)

	boom := req
	boom.Kind = "boom"
	_, err = d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{req, boom}})
	require.ErrorContains(t, err, "boom")

	_, err = db.ExecContext(ctx, `DROP TRIGGER boom`)
	require.NoError(t, err, "the write lock is free: the failed append was rolled back")
	var pos int64
	require.NoError(t, db.QueryRowContext(ctx, `SELECT max(position) FROM journal_entries WHERE world = 'w'`).Scan(&pos))
	require.Equal(t, int64(2), pos, "the guarded first INSERT was rolled back")
	got, err = appendOneTo(ctx, d, req)
	require.NoError(t, err)
	require.Equal(t, int64(3), got.Position)
}

// TestPositional: numbered parameters become plain ones, each taking the
// argument its number named, repeats included.
func TestPositional(t *testing.T) {
	t.Parallel()
	q, order := positional("a = ?2 AND b = ?10 AND (?2 = 0 OR c = ?1)")
	require.Equal(t, "a = ? AND b = ? AND (? = 0 OR c = ?)", q)
	require.Equal(t, []int{1, 9, 1, 0}, order)

	for _, g := range []struct {
		q     string
		order []int
		rows  int
	}{{guardOne, guardOneOrder, 1}, {guardMany, guardManyOrder, entryChunk}} {
		require.Equal(t, strings.Count(g.q, "?"), len(g.order))
		seen := map[int]bool{}
		for _, k := range g.order {
			seen[k] = true
		}
		require.Len(t, seen, 11*g.rows+20, "the entries' parameters and tailGuard's 20, each bound")
	}
	require.Panics(t, func() { positional("a = ?") })
}

// TestDirectAppendPanicFreesTheWriteLock: a panic after BEGIN IMMEDIATE in
// a remembered-head append (here the store clock's read, right after
// BEGIN) rolls back and finalizes the direct statements before it goes
// on. sql.Conn.Raw then closes the connection; closed with its write
// transaction open and statements unfinalized it would stay a zombie
// holding the write lock, and every later write would fail SQLITE_BUSY.
// Another connection can write at once, and the next append succeeds.
func TestDirectAppendPanicFreesTheWriteLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "direct.db")
	clk := &hookClock{Clock: clock.Real()}
	d, err := OpenEngine(ctx, Config{Path: path, Clock: clk, BusyTimeout: 300 * time.Millisecond}, modernc())
	require.NoError(t, err)
	defer d.Close()
	req := migratedWorld(t, d)
	appendOne := func() (journal.AppendOutcome, error) { return appendOneTo(ctx, d, req) }
	got, err := appendOne() // reads the head; remembered from here on
	require.NoError(t, err)
	require.Equal(t, int64(2), got.Position)

	boom := func() { panic("boom") }
	clk.hook.Store(&boom)
	require.PanicsWithValue(t, "boom", func() { _, _ = appendOne() })

	db, err := sql.Open("sqlite", moderncDSN(path, 300*time.Millisecond, false))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `CREATE TABLE after_panic (a INTEGER)`)
	require.NoError(t, err, "the write lock is free after the panic")
	got, err = appendOne()
	require.NoError(t, err, "the store writes after the panic")
	require.Equal(t, int64(3), got.Position)
}

// appendOneTo appends req to world w of d alone and returns its outcome.
func appendOneTo(ctx context.Context, d *Driver, req journal.AppendRequest) (journal.AppendOutcome, error) {
	out, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{req}})
	if err != nil {
		return journal.AppendOutcome{}, err
	}
	return out[0], nil
}

// TestDirectAppendWaitsForAnotherWriter: a remembered-head append's BEGIN
// IMMEDIATE is tried without waiting (beginNow), so with another process
// holding the write lock it falls back to waiting under the caller's
// context — and that wait, not the connection's busy timeout, bounds it.
// Here the other writer is a second connection on the file, in a BEGIN
// IMMEDIATE of its own; the store's busy timeout is 30 s, so an append that
// ignored its context would wait that long. Both ways the connection's busy
// timeout is put back afterwards, on the same connection (not a new one
// opened with the DSN's).
func TestDirectAppendWaitsForAnotherWriter(t *testing.T) {
	t.Parallel()
	const busy = 30 * time.Second
	setup := func(t *testing.T) (*Driver, journal.AppendRequest, *sql.Conn, chan struct{}) {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "busy.db")
		d, err := Open(ctx, Config{Path: path, BusyTimeout: busy})
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
		req := migratedWorld(t, d)
		_, err = appendOneTo(ctx, d, req) // reads the head; remembered from here on
		require.NoError(t, err)
		waiting := make(chan struct{}, 1)
		d.s.onBusyBegin = func() { waiting <- struct{}{} }
		other, err := sql.Open("sqlite", moderncDSN(path, busy, false))
		require.NoError(t, err)
		t.Cleanup(func() { other.Close() })
		conn, err := other.Conn(ctx)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
		require.NoError(t, err)
		return d, req, conn, waiting
	}
	// writer is the writer's driver connection and its busy timeout.
	writer := func(t *testing.T, d *Driver) (any, int64) {
		ctx := context.Background()
		c, err := d.s.w.Conn(ctx)
		require.NoError(t, err)
		defer c.Close()
		var dc any
		require.NoError(t, c.Raw(func(x any) error { dc = x; return nil }))
		var ms int64
		require.NoError(t, c.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&ms))
		return dc, ms
	}
	// waited waits for the append's first BEGIN to be refused, or marks
	// the test failed (t.Error: it may run off the test's goroutine).
	waited := func(t *testing.T, waiting <-chan struct{}) {
		select {
		case <-waiting:
		case <-time.After(busy / 2): // a guard against hanging, not a timing
			t.Error("the append's BEGIN never found the lock taken")
		}
	}

	t.Run("the caller's context ends the wait", func(t *testing.T) {
		t.Parallel()
		d, req, other, waiting := setup(t)
		conn0, _ := writer(t, d)
		// Cancelled once the append waits, not at a deadline a loaded box
		// might pass before the append's first BEGIN.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { waited(t, waiting); cancel() }()
		t0 := time.Now()
		_, err := appendOneTo(ctx, d, req)
		took := time.Since(t0)
		require.ErrorIs(t, err, context.Canceled)
		// A bound, not a timing: a wait under the busy timeout alone (as a
		// PRAGMA prepared once, not run as text, left it) takes 30 s.
		require.Less(t, took, busy/2, "the wait ended with the caller's context, not the busy timeout")
		_, err = other.ExecContext(context.Background(), "ROLLBACK")
		require.NoError(t, err)
		conn1, ms := writer(t, d)
		require.Equal(t, busy.Milliseconds(), ms, "the busy timeout is the store's again")
		require.Same(t, conn0, conn1, "on the same connection")
		got, err := appendOneTo(context.Background(), d, req)
		require.NoError(t, err)
		require.Equal(t, int64(3), got.Position, "the timed-out append wrote nothing")
	})

	t.Run("the lock freed while it waits", func(t *testing.T) {
		t.Parallel()
		d, req, other, waiting := setup(t)
		done := make(chan error, 1)
		go func() {
			got, err := appendOneTo(context.Background(), d, req)
			if err == nil && got.Position != 3 {
				err = fmt.Errorf("position %d, want 3", got.Position)
			}
			done <- err
		}()
		waited(t, waiting) // the append's first BEGIN was refused: it waits now, or is about to
		_, err := other.ExecContext(context.Background(), "COMMIT")
		require.NoError(t, err)
		require.NoError(t, <-done)
		_, ms := writer(t, d)
		require.Equal(t, busy.Milliseconds(), ms, "the busy timeout is the store's again")
	})
}
