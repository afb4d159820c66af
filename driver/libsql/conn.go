package libsql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// connector opens go-libsql connections on one file and prepares each:
// the pragmas the modernc engine sets in its DSN, run on the connection.
type connector struct {
	drv     sqldriver.Driver // go-libsql's
	dsn     string
	pragmas []string
	writer  bool
}

func newConnector(path string, busy time.Duration, reader bool) (*connector, error) {
	db, err := sql.Open("libsql", "file:"+path) // connects to nothing: only to reach the registered driver
	if err != nil {
		return nil, fmt.Errorf("libsql: %w", err)
	}
	drv := db.Driver()
	_ = db.Close()
	// busy_timeout first, as in the modernc engine: a new file's switch
	// to WAL takes a lock other openers must wait for.
	pragmas := []string{fmt.Sprintf("busy_timeout = %d", busy.Milliseconds()), "journal_mode = WAL",
		"synchronous = FULL", "foreign_keys = ON"}
	if reader {
		pragmas = append(pragmas, "query_only = ON")
	}
	return &connector{drv: drv, dsn: "file:" + path, pragmas: pragmas, writer: !reader}, nil
}

func (c *connector) Driver() sqldriver.Driver { return c.drv }

func (c *connector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	raw, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	q, ok1 := raw.(sqldriver.QueryerContext)
	_, ok2 := raw.(sqldriver.ExecerContext)
	_, ok3 := raw.(sqldriver.ConnPrepareContext)
	if !ok1 || !ok2 || !ok3 {
		_ = raw.Close()
		return nil, errors.New("libsql: the connection lacks QueryContext, ExecContext or PrepareContext")
	}
	for _, p := range c.pragmas {
		// A pragma that sets may answer a row (journal_mode does): query
		// and drain it.
		rows, err := q.QueryContext(ctx, "PRAGMA "+p, nil)
		if err == nil {
			err = drain(rows)
		}
		if err != nil {
			_ = raw.Close()
			return nil, fmt.Errorf("libsql: PRAGMA %s: %w", p, err)
		}
	}
	return &conn{Conn: raw, writer: c.writer}, nil
}

func drain(rows sqldriver.Rows) error {
	dest := make([]sqldriver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(dest); err != nil {
			_ = rows.Close()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// conn is a go-libsql connection that takes numbered parameters and
// begins the writer's transactions IMMEDIATE.
type conn struct {
	sqldriver.Conn
	writer bool
}

func (c *conn) ExecContext(ctx context.Context, q string, args []sqldriver.NamedValue) (sqldriver.Result, error) {
	q2, order := numbered(q)
	a, err := inOrder(order, args)
	if err != nil {
		return nil, err
	}
	return c.Conn.(sqldriver.ExecerContext).ExecContext(ctx, q2, a)
}

func (c *conn) QueryContext(ctx context.Context, q string, args []sqldriver.NamedValue) (sqldriver.Rows, error) {
	q2, order := numbered(q)
	a, err := inOrder(order, args)
	if err != nil {
		return nil, err
	}
	return c.Conn.(sqldriver.QueryerContext).QueryContext(ctx, q2, a)
}

func (c *conn) PrepareContext(ctx context.Context, q string) (sqldriver.Stmt, error) {
	q2, order := numbered(q)
	st, err := c.Conn.(sqldriver.ConnPrepareContext).PrepareContext(ctx, q2)
	if err != nil {
		return nil, err
	}
	return &stmt{Stmt: st, order: order}, nil
}

// BeginTx begins IMMEDIATE on the writer — it takes SQLite's write lock at
// once, also against other processes, as the modernc engine's
// _txlock=immediate does — and DEFERRED on a reader.
func (c *conn) BeginTx(ctx context.Context, opts sqldriver.TxOptions) (sqldriver.Tx, error) {
	if opts.Isolation != sqldriver.IsolationLevel(sql.LevelDefault) {
		return nil, fmt.Errorf("libsql: isolation level %d is not supported", opts.Isolation)
	}
	begin := "BEGIN DEFERRED"
	if c.writer {
		begin = "BEGIN IMMEDIATE"
	}
	if _, err := c.Conn.(sqldriver.ExecerContext).ExecContext(ctx, begin, nil); err != nil {
		return nil, err
	}
	return &tx{c: c}, nil
}

// Begin is BeginTx with the defaults.
func (c *conn) Begin() (sqldriver.Tx, error) {
	return c.BeginTx(context.Background(), sqldriver.TxOptions{})
}

type tx struct{ c *conn }

func (t *tx) Commit() error {
	_, err := t.c.Conn.(sqldriver.ExecerContext).ExecContext(context.Background(), "COMMIT", nil)
	return err
}

func (t *tx) Rollback() error {
	_, err := t.c.Conn.(sqldriver.ExecerContext).ExecContext(context.Background(), "ROLLBACK", nil)
	return err
}

type stmt struct {
	sqldriver.Stmt
	order []int
}

// NumInput is -1: the statement's "?" count is not its argument count
// once numbered parameters are laid out in order.
func (s *stmt) NumInput() int { return -1 }

func (s *stmt) ExecContext(ctx context.Context, args []sqldriver.NamedValue) (sqldriver.Result, error) {
	a, err := inOrder(s.order, args)
	if err != nil {
		return nil, err
	}
	return s.Stmt.(sqldriver.StmtExecContext).ExecContext(ctx, a)
}

func (s *stmt) QueryContext(ctx context.Context, args []sqldriver.NamedValue) (sqldriver.Rows, error) {
	a, err := inOrder(s.order, args)
	if err != nil {
		return nil, err
	}
	return s.Stmt.(sqldriver.StmtQueryContext).QueryContext(ctx, a)
}

// numbered rewrites every parameter of q to a plain "?" and returns, for
// each, the 1-based number of the argument it takes: ?N takes argument N,
// a bare ? the one after the previous bare ? (SQLite's own rule for
// mixing them is the same while bare ones come first, which is how the
// SQLite driver writes them). String literals, quoted identifiers and
// comments are left alone. A statement without numbered parameters comes
// back unchanged, with a nil order.
func numbered(q string) (string, []int) {
	if !strings.Contains(q, "?") {
		return q, nil
	}
	var b strings.Builder
	var order []int
	hasNumbered := false
	next := 0
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(q) && q[j] != c {
				j++
			}
			b.WriteString(q[i:min(j+1, len(q))])
			i = j
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				j = len(q) - i
			}
			b.WriteString(q[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			j := strings.Index(q[i+2:], "*/")
			end := len(q)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(q[i:end])
			i = end - 1
		case c == '?':
			j := i + 1
			n := 0
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				n = n*10 + int(q[j]-'0')
				j++
			}
			if j > i+1 {
				hasNumbered = true
				order = append(order, n)
			} else {
				next++
				order = append(order, next)
			}
			b.WriteByte('?')
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	if !hasNumbered {
		return q, nil
	}
	return b.String(), order
}

// inOrder lays args out as order says (nil: as they are). A parameter
// with no argument is refused, not bound as NULL.
func inOrder(order []int, args []sqldriver.NamedValue) ([]sqldriver.NamedValue, error) {
	if order == nil {
		return args, nil
	}
	out := make([]sqldriver.NamedValue, len(order))
	for k, n := range order {
		if n < 1 || n > len(args) {
			return nil, fmt.Errorf("libsql: parameter ?%d of %d arguments", n, len(args))
		}
		out[k] = sqldriver.NamedValue{Ordinal: k + 1, Value: args[n-1].Value}
	}
	return out, nil
}
