package sqlite

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// A keyless append to a world whose head this store remembers (heads) runs
// under database/sql, on the writer's driver connection itself
// (changeDirect): BEGIN IMMEDIATE, the entry INSERTs (the first guarded by
// tailGuard's known form) and COMMIT, each a statement prepared once on that connection. The
// statements and the checks are change's remembered-head path, unchanged;
// what goes is what database/sql and modernc.org/sqlite add around them,
// per append: BEGIN and COMMIT parsed afresh (modernc prepares them at
// every transaction), the transaction's watcher goroutine and its context,
// COMMIT's interrupt goroutine, and database/sql's per-statement locking,
// argument conversion and statement lookups. Counted in docs/BENCHMARKS.md
// (stop 27, helper sqapp2).
//
// Only BEGIN IMMEDIATE runs under the caller's context: it is the one
// statement that can wait (for another process's write lock, under the busy
// timeout), and that wait ends at the caller's deadline, as BeginTx's does.
// It is first tried without waiting (beginNow): modernc watches a
// statement's context with a goroutine of its own, whose start and end wake
// another thread — about 30–50 µs of CPU per append on two cores, a fifth
// of a single append's — and only a BEGIN that finds the lock taken needs
// the watch.
// The statements after it hold the write lock already and run in process;
// COMMIT in WAL mode appends to the WAL under that lock and its checkpoint
// is PASSIVE, so it waits for no lock either. A context that ends before
// COMMIT still ends the change with nothing written, as database/sql's
// Commit does.

// directStmts are changeDirect's statements, prepared on one driver
// connection (conn): they are valid only on it.
type directStmts struct {
	conn                                                  *directConn
	begin, guard, guardMany, insert, many, commit, rollbk sqldriver.StmtExecContext
	all                                                   []sqldriver.Stmt
}

// guardOne and guardMany are guardedInsert's known forms (one entry,
// entryChunk entries) with plain ? parameters, and guardOneOrder and
// guardManyOrder the argument each takes: modernc reads a numbered
// parameter's name back (a Go string, then parsed) at every bind, a plain
// one not.
var (
	guardOne, guardOneOrder   = positional(guardedInsert(1, true))
	guardMany, guardManyOrder = positional(guardedInsert(entryChunk, true))
)

// positional rewrites the numbered parameters ?N of q as plain ?s and
// returns, for each in order, the index (N-1) of the argument it takes.
// q must hold no ? inside a literal (the statements it is used on hold no
// literal with one).
func positional(q string) (string, []int) {
	var b strings.Builder
	var order []int
	for i := 0; i < len(q); i++ {
		b.WriteByte(q[i])
		if q[i] != '?' {
			continue
		}
		j := i + 1
		for j < len(q) && q[j] >= '0' && q[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(q[i+1 : j])
		if err != nil || n < 1 {
			panic(fmt.Sprintf("sqlite: positional: parameter %q is not ?N", q[i:j]))
		}
		order = append(order, n-1)
		i = j - 1
	}
	return b.String(), order
}

// directConnector makes the writer's connections (Engine.Open wraps its
// writer's connector in it when the engine runs changeDirect). Each
// connection it makes (directConn) owns the direct statements prepared on
// it and finalizes them in Close, before the connection itself closes —
// whoever closes it: the store's Close, changeDirect throwing it away, or
// database/sql replacing it on its own (a driver.ErrBadConn, a failed
// ResetSession or IsValid). Statements left unfinalized would keep the
// closed connection open as a zombie (sqlite3_close_v2: its handle, file
// descriptors and cache) until the process ends: TestWriterReplacement.
type directConnector struct {
	sqldriver.Connector
	busy time.Duration // the busy_timeout its DSN sets: beginNow restores it
}

func (c directConnector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &directConn{Conn: cn, waitPragma: "PRAGMA busy_timeout = " + strconv.FormatInt(c.busy.Milliseconds(), 10)}, nil
}

// dsnConnector opens drv's connections on a data source name.
type dsnConnector struct {
	dsn string
	drv sqldriver.Driver
}

func (c dsnConnector) Connect(context.Context) (sqldriver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() sqldriver.Driver                        { return c.drv }

// directConn is a writer connection with its direct statements (nil until
// changeDirect first runs on it). database/sql serializes every use of a
// connection, Close included, with sql.Conn.Raw's: st needs no lock. The
// methods below pass database/sql's calls through; one the connection
// under it does not have answers as database/sql's own fallback would.
type directConn struct {
	sqldriver.Conn
	waitPragma string // sets the connection's busy timeout back to its DSN's (beginNow)
	st         *directStmts
}

// execText runs q, a statement without parameters, compiled afresh.
func (c *directConn) execText(ctx context.Context, q string) error {
	_, err := c.ExecContext(ctx, q, nil)
	if !errors.Is(err, sqldriver.ErrSkip) {
		return err
	}
	st, err := c.PrepareContext(ctx, q) // a connection without ExecerContext
	if err != nil {
		return err
	}
	defer st.Close()
	ex, ok := st.(sqldriver.StmtExecContext)
	if !ok {
		return errNoDirect
	}
	_, err = ex.ExecContext(ctx, nil)
	return err
}

func (c *directConn) Close() error {
	if c.st != nil {
		c.st.close()
		c.st = nil
	}
	return c.Conn.Close()
}

func (c *directConn) PrepareContext(ctx context.Context, q string) (sqldriver.Stmt, error) {
	if p, ok := c.Conn.(sqldriver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, q)
	}
	return c.Conn.Prepare(q)
}

func (c *directConn) BeginTx(ctx context.Context, opts sqldriver.TxOptions) (sqldriver.Tx, error) {
	if b, ok := c.Conn.(sqldriver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return c.Conn.Begin() //nolint:staticcheck // the connection has nothing newer
}

func (c *directConn) ExecContext(ctx context.Context, q string, args []sqldriver.NamedValue) (sqldriver.Result, error) {
	if e, ok := c.Conn.(sqldriver.ExecerContext); ok {
		return e.ExecContext(ctx, q, args)
	}
	return nil, sqldriver.ErrSkip // database/sql prepares it
}

func (c *directConn) QueryContext(ctx context.Context, q string, args []sqldriver.NamedValue) (sqldriver.Rows, error) {
	if e, ok := c.Conn.(sqldriver.QueryerContext); ok {
		return e.QueryContext(ctx, q, args)
	}
	return nil, sqldriver.ErrSkip
}

func (c *directConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(sqldriver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *directConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(sqldriver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *directConn) IsValid() bool {
	if v, ok := c.Conn.(sqldriver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// errNoDirect: the writer's connection cannot run changeDirect (it is not
// a directConn, or its statements do not take contexts); change goes
// database/sql's way.
var errNoDirect = errors.New("sqlite: the writer connection has no direct statements")

// directStmtsOn returns the statements prepared on dc, preparing them on
// first use. The caller holds dc (sql.Conn.Raw).
func directStmtsOn(ctx context.Context, dc any) (*directStmts, error) {
	c, ok := dc.(*directConn)
	if !ok {
		return nil, errNoDirect
	}
	if c.st != nil {
		return c.st, nil
	}
	s := &directStmts{conn: c}
	for _, p := range []struct {
		dst *sqldriver.StmtExecContext
		sql string
	}{
		{&s.begin, "BEGIN IMMEDIATE"},
		{&s.guard, guardOne},
		{&s.guardMany, guardMany},
		{&s.insert, insertEntrySQL},
		{&s.many, multiRow(insertEntryHead+" VALUES ", "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", entryChunk)},
		{&s.commit, "COMMIT"},
		{&s.rollbk, "ROLLBACK"},
	} {
		st, err := c.PrepareContext(ctx, p.sql)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("sqlite: preparing direct statements: %w", err)
		}
		s.all = append(s.all, st)
		ex, ok := st.(sqldriver.StmtExecContext)
		if !ok {
			s.close()
			return nil, errNoDirect
		}
		*p.dst = ex
	}
	c.st = s
	return s, nil
}

// drop finalizes s, the statements of the connection the caller holds.
func (s *directStmts) drop() {
	if s.conn.st == s {
		s.conn.st = nil
	}
	s.close()
}

func (s *directStmts) close() {
	for _, st := range s.all {
		st.Close()
	}
	s.all = nil
}

// changeDirect is change's remembered-head path (see change) for a plan
// that makes no read of its own (a keyless append), run on the writer's
// driver connection. done false means nothing was written and change must
// go database/sql's way: the connection cannot run it, the plan wanted a
// read or changes the lease, or the stored row is not h (stale true: then
// the head is to be read, not remembered).
func (d *store) changeDirect(ctx context.Context, worldID, op string, h headRow, plan planFunc) (after *driver.World, done, stale bool, err error) {
	conn, err := d.w.Conn(ctx)
	if err != nil {
		return nil, true, false, fmt.Errorf("sqlite: %s %s: begin: %w", op, worldID, err)
	}
	defer conn.Close()
	rawErr := conn.Raw(func(dc any) error {
		var discard bool
		after, done, stale, discard, err = d.changeOn(ctx, dc, worldID, op, h, plan)
		if discard {
			// Its statements are finalized (changeOn dropped them), so
			// database/sql closes the connection for real, not into a
			// zombie that keeps its handle.
			return sqldriver.ErrBadConn
		}
		return nil
	})
	if rawErr != nil && err == nil {
		if !done {
			// Nothing was written (the guard failed, the plan refused) and
			// only the connection went: database/sql's way answers, on
			// another connection, rather than "bad connection" (review).
			return nil, false, stale, nil
		}
		return nil, true, false, fmt.Errorf("sqlite: %s %s: %w", op, worldID, rawErr)
	}
	return after, done, stale, err
}

// changeOn is changeDirect on the driver connection dc. discard true: the
// connection may still be inside the transaction (its ROLLBACK failed), so
// the statements prepared on it are finalized and the connection is to be
// thrown away.
//
// A panic after BEGIN (the plan, the clock, a bind) rolls back and
// finalizes the statements before it goes on: sql.Conn.Raw then closes
// the connection, and a connection closed with its write transaction open
// and statements unfinalized would stay a zombie holding the write lock —
// every later write, in this process and others on the file, would fail
// SQLITE_BUSY.
func (d *store) changeOn(ctx context.Context, dc any, worldID, op string, h headRow, plan planFunc) (
	_ *driver.World, done, stale, discard bool, _ error) {
	st, err := directStmtsOn(ctx, dc)
	if err != nil {
		return nil, false, false, false, nil // database/sql's way reports any error the schema has
	}
	after, done, stale, discard, err := d.changeWith(ctx, st, worldID, op, h, plan)
	if discard {
		st.drop()
	}
	return after, done, stale, discard, err
}

// changeWith is changeOn with the statements st.
func (d *store) changeWith(ctx context.Context, st *directStmts, worldID, op string, h headRow, plan planFunc) (
	_ *driver.World, done, stale, discard bool, _ error) {
	bg := context.Background()
	// rollback ends the transaction, if one is open: a BEGIN that took
	// effect may still report the context's error, and SQLite rolls some
	// failures back itself. "No transaction is active" is the expected
	// error then, and database/sql's own deferred Rollback ignores its
	// error the same way.
	if discard, err := st.beginNow(ctx, d.eng.IsBusy, d.onBusyBegin); err != nil {
		_, _ = st.rollbk.ExecContext(bg, nil)
		return nil, true, false, discard, fmt.Errorf("sqlite: %s %s: begin: %w", op, worldID, err)
	}
	// From here a transaction is open: a ROLLBACK that fails leaves the
	// connection unfit for the pool (SQLite may have rolled back itself
	// after some failures, and then says no transaction is active — the
	// connection is thrown away all the same, which costs one reopen).
	rollback := func() {
		if _, err := st.rollbk.ExecContext(bg, nil); err != nil {
			discard = true
		}
	}
	defer func() {
		if r := recover(); r != nil {
			rollback()
			st.drop()
			panic(r)
		}
	}()
	now := d.clock.Now()
	w := h.world()
	read := false // the plan asked for a read: go database/sql's way
	q := &headQueries{
		rejected: func(string) bool { read = true; return false },
		appended: func(string) (int64, bool) { read = true; return 0, false },
		prefetch: func([]string) { read = true },
	}
	p, err := plan(w, now, q)
	if err == nil && !read {
		err = journal.BindKeys(&p, func(string) ([]byte, error) { read = true; return nil, nil })
	}
	if err != nil || read || p.Empty() || len(p.Rejected) > 0 || !sameLease(&w.State, &p.After) {
		// A refusal or failure here may be the remembered head's fault:
		// database/sql's way reads the head and plans again.
		rollback()
		return nil, false, !read, discard, nil
	}
	guard := knownGuardArgs(&h, &p)
	err = d.insertEntriesWith(p.Entries, func(many, first bool, args []any) error {
		if first {
			s, order := st.guard, guardOneOrder
			if many {
				s, order = st.guardMany, guardManyOrder
			}
			return guarded(s.ExecContext(bg, ordered(append(args, guard...), order)))(len(args) / 11)
		}
		s := st.insert
		if many {
			s = st.many
		}
		_, err := s.ExecContext(bg, namedValues(args))
		return err
	})
	if errors.Is(err, errGuard) {
		rollback()
		return nil, false, true, discard, nil // not the remembered head: nothing written
	}
	if err != nil {
		rollback()
		return nil, true, false, discard, fmt.Errorf("sqlite: %s %s: %w", op, worldID, err)
	}
	if err := ctx.Err(); err != nil {
		rollback()
		return nil, true, false, discard, fmt.Errorf("sqlite: %s %s: commit: %w", op, worldID, err)
	}
	if _, err := st.commit.ExecContext(bg, nil); err != nil {
		rollback()
		return nil, true, false, discard, fmt.Errorf("sqlite: %s %s: commit: %w", op, worldID, err)
	}
	d.heads.put(h.after(&p.After))
	after := *w
	after.State = p.After
	return &after, true, false, false, nil
}

// beginNow runs BEGIN IMMEDIATE. It tries first with the connection's busy
// timeout at 0 and without the caller's context (no watcher goroutine):
// with no other process writing, that takes the lock at once. Only if
// another process holds it (SQLITE_BUSY) does it wait, under the caller's
// context as before: the busy timeout put back, the watch ending the wait at
// the caller's deadline. A context already done writes nothing, as
// modernc's own check would. discard: the busy timeout could not be put
// back, so the connection is to be thrown away rather than pooled with
// writes that would not wait. onBusy (a test hook; nil) is called before
// the wait.
//
// The PRAGMAs are run as text, not prepared: SQLite sets busy_timeout when
// it compiles the PRAGMA, so a prepared one would set it once, at its
// prepare, and no more.
func (s *directStmts) beginNow(ctx context.Context, isBusy func(error) bool, onBusy func()) (discard bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	bg := context.Background()
	if err := s.conn.execText(bg, "PRAGMA busy_timeout = 0"); err != nil {
		// SQLite sets the timeout when it compiles the PRAGMA: one that
		// failed later (its step, its finalize) may have set it (review).
		return true, err
	}
	_, err = s.begin.ExecContext(bg, nil)
	if werr := s.conn.execText(bg, s.conn.waitPragma); werr != nil {
		return true, errors.Join(err, fmt.Errorf("restoring the busy timeout: %w", werr))
	}
	if err == nil || !isBusy(err) {
		return false, err
	}
	if onBusy != nil {
		onBusy()
	}
	_, err = s.begin.ExecContext(ctx, nil)
	return false, err
}

// ordered gives args, each already a driver value, to a statement made by
// positional: its i-th parameter takes args[order[i]].
func ordered(args []any, order []int) []sqldriver.NamedValue {
	nv := make([]sqldriver.NamedValue, len(order))
	for i, k := range order {
		nv[i] = sqldriver.NamedValue{Ordinal: i + 1, Value: args[k]}
	}
	return nv
}

// namedValues gives args their ordinals. Every value is already a driver
// value (int64, string, []byte or nil): there is no database/sql to
// convert them here.
func namedValues(args []any) []sqldriver.NamedValue {
	nv := make([]sqldriver.NamedValue, len(args))
	for i, v := range args {
		nv[i] = sqldriver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return nv
}
