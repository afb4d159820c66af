package sqlite

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	msqlite "modernc.org/sqlite"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// countedEngine is the modernc engine whose writer connection counts the
// statements it runs: BEGIN (BeginTx), each Exec and Query, COMMIT and
// ROLLBACK. The readers are not counted.
func countedEngine(n *atomic.Int64) Engine {
	e := modernc()
	e.Open = func(path string, busy time.Duration, reader bool) (*sql.DB, error) {
		if reader {
			return openModernc(path, busy, reader)
		}
		return sql.OpenDB(directConnector{countedConnector{dsn: moderncDSN(path, busy, reader), n: n}, busy}), nil
	}
	return e
}

type countedConnector struct {
	dsn string
	n   *atomic.Int64
}

func (c countedConnector) Connect(context.Context) (sqldriver.Conn, error) {
	cn, err := c.Driver().Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &countedConn{Conn: cn, n: c.n}, nil
}

func (c countedConnector) Driver() sqldriver.Driver { return &msqlite.Driver{} }

type countedConn struct {
	sqldriver.Conn
	n *atomic.Int64
}

func (c *countedConn) PrepareContext(ctx context.Context, q string) (sqldriver.Stmt, error) {
	st, err := c.Conn.(sqldriver.ConnPrepareContext).PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return &countedStmt{Stmt: st, n: c.n}, nil
}

func (c *countedConn) BeginTx(ctx context.Context, opts sqldriver.TxOptions) (sqldriver.Tx, error) {
	c.n.Add(1)
	tx, err := c.Conn.(sqldriver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return countedTx{Tx: tx, n: c.n}, nil
}

func (c *countedConn) ExecContext(ctx context.Context, q string, args []sqldriver.NamedValue) (sqldriver.Result, error) {
	c.n.Add(1)
	return c.Conn.(sqldriver.ExecerContext).ExecContext(ctx, q, args)
}

func (c *countedConn) QueryContext(ctx context.Context, q string, args []sqldriver.NamedValue) (sqldriver.Rows, error) {
	c.n.Add(1)
	return c.Conn.(sqldriver.QueryerContext).QueryContext(ctx, q, args)
}

func (c *countedConn) ResetSession(ctx context.Context) error {
	return c.Conn.(sqldriver.SessionResetter).ResetSession(ctx)
}

type countedStmt struct {
	sqldriver.Stmt
	n *atomic.Int64
}

func (s *countedStmt) ExecContext(ctx context.Context, args []sqldriver.NamedValue) (sqldriver.Result, error) {
	s.n.Add(1)
	return s.Stmt.(sqldriver.StmtExecContext).ExecContext(ctx, args)
}

func (s *countedStmt) QueryContext(ctx context.Context, args []sqldriver.NamedValue) (sqldriver.Rows, error) {
	s.n.Add(1)
	return s.Stmt.(sqldriver.StmtQueryContext).QueryContext(ctx, args)
}

type countedTx struct {
	sqldriver.Tx
	n *atomic.Int64
}

func (t countedTx) Commit() error   { t.n.Add(1); return t.Tx.Commit() }
func (t countedTx) Rollback() error { t.n.Add(1); return t.Tx.Rollback() }

// TestStatementsPerAppend counts the statements a single-entry append runs
// on the writer. The first append to a world this store has not written
// reads the head: BEGIN IMMEDIATE, head SELECT, the entry INSERT guarded by
// the plan's Cond (tailGuard; no head row is written), COMMIT. Every later
// one plans from the head the store committed (heads) and checks it in the
// INSERT's guard instead of reading it: three, run on the writer's driver
// connection (changeDirect; its prepared statements are counted as
// database/sql's are), and two PRAGMA busy_timeout around the BEGIN, which
// is tried without waiting first (beginNow) — five. When another writer has
// moved the head meanwhile, the check fails and that transaction is rolled
// back (the PRAGMAs, BEGIN, INSERT, ROLLBACK); the append then reads the
// head and is planned again in a database/sql transaction (four more) —
// nine statements, and the position is the next one, as a fresh read
// gives.
func TestStatementsPerAppend(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "count.db")
	var n atomic.Int64
	d, err := OpenEngine(ctx, Config{Path: path}, countedEngine(&n))
	require.NoError(t, err)
	defer d.Close()
	req := migratedWorld(t, d)
	appendOne := func(d driver.Driver) (pos, statements int64) {
		t.Helper()
		n0 := n.Load()
		out, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{req}})
		require.NoError(t, err)
		require.NoError(t, out[0].Err)
		return out[0].Position, n.Load() - n0
	}
	pos, stmts := appendOne(d)
	require.Equal(t, [2]int64{2, 4}, [2]int64{pos, stmts}, "the first append reads the head")
	const k = 20
	n0 := n.Load()
	for i := range int64(k) {
		pos, _ := appendOne(d)
		require.Equal(t, 3+i, pos)
	}
	require.Equal(t, int64(5*k), n.Load()-n0, "busy_timeout 0, BEGIN, busy_timeout back, guarded INSERT, COMMIT per append")

	// Another store on the file (as another process would) appends: this
	// store's remembered head is stale.
	other, err := Open(ctx, Config{Path: path})
	require.NoError(t, err)
	defer other.Close()
	out, err := other.JournalAppend(ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{req}})
	require.NoError(t, err)
	require.Equal(t, int64(3+k), out[0].Position)
	pos, stmts = appendOne(d)
	require.Equal(t, [2]int64{4 + k, 9}, [2]int64{pos, stmts}, "a stale head fails the check (PRAGMA, BEGIN, PRAGMA, INSERT, ROLLBACK): read, planned again")
	pos, stmts = appendOne(d)
	require.Equal(t, [2]int64{5 + k, 5}, [2]int64{pos, stmts})

	// A keyed append also looks its key up under the lock: four.
	req.Key = "k-1"
	pos, stmts = appendOne(d)
	require.Equal(t, [2]int64{6 + k, 4}, [2]int64{pos, stmts}, "BEGIN, key SELECT, guarded INSERT, COMMIT")
	pos, stmts = appendOne(d)
	// A retried key writes nothing, so nothing checks the remembered
	// head: it is read and the key looked up again (one statement more
	// than without the cache, on this rare path).
	require.Equal(t, [2]int64{6 + k, 5}, [2]int64{pos, stmts}, "BEGIN, key SELECT, head SELECT, key SELECT, COMMIT")

	// The journal is one chain, whichever store wrote which entry.
	es, err := d.JournalRead(ctx, &driver.JournalReadParams{World: "w", From: 1, Limit: 100})
	require.NoError(t, err)
	require.Len(t, es, int(6+k))
	rep := journal.Audit(es)
	require.Nil(t, rep.Violation)
	require.Equal(t, int64(6+k), rep.Final.Position)
}

// TestStaleRememberedHeadIsReadAgain: a head changed behind this store's back
// in a lease column only (here: the expiry, moved by SQL; no store path
// does that without journaling) still gets the answer a fresh read gives.
// Planned from the remembered head the append would be refused as expired
// (a refusal is journaled, so it is a write); the check in the UPDATE
// sees the stored expiry differ, and the append is planned again from the
// stored row, where the lease is live.
func TestStaleRememberedHeadIsReadAgain(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stale.db")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	d, err := Open(ctx, Config{Path: path, Clock: clk})
	require.NoError(t, err)
	defer d.Close()
	req := migratedWorld(t, d)
	appendOne := func() journal.AppendOutcome {
		out, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{req}})
		require.NoError(t, err)
		return out[0]
	}
	require.NoError(t, appendOne().Err) // this store now remembers the head, expiring at t0+1h

	db, err := sql.Open("sqlite", moderncDSN(path, time.Second, false))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `UPDATE worlds SET expires_at = ? WHERE id = 'w'`, t0.Add(3*time.Hour).UnixMicro())
	require.NoError(t, err)
	clk.Advance(2 * time.Hour)

	got := appendOne()
	require.NoError(t, got.Err, "the stored lease is live")
	require.Equal(t, int64(3), got.Position)
}

// migratedWorld migrates d and creates world "w" held by "home", and
// returns a one-entry append request under its grant.
func migratedWorld(t *testing.T, d *Driver) journal.AppendRequest {
	t.Helper()
	ctx := context.Background()
	_, err := d.Migrate(ctx)
	require.NoError(t, err)
	w, err := d.WorldCreate(ctx, &driver.WorldCreateParams{World: "w", Home: "home", Term: time.Hour})
	require.NoError(t, err)
	return journal.AppendRequest{Holder: "home", Epoch: w.Epoch, SeenPosition: w.GrantedAt, Kind: "x", Payload: []byte(`{}`)}
}
