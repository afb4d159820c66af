package sqlite

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// badConnector makes modernc connections whose next ResetSession, once
// bad is set, answers driver.ErrBadConn: database/sql then closes the
// connection and opens another in its place, on its own.
type badConnector struct {
	dsn string
	bad *atomic.Bool
}

func (c badConnector) Connect(context.Context) (sqldriver.Conn, error) {
	cn, err := moderncDriver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &badConn{Conn: cn, bad: c.bad}, nil
}

func (c badConnector) Driver() sqldriver.Driver { return moderncDriver }

type badConn struct {
	sqldriver.Conn
	bad *atomic.Bool
}

func (c *badConn) PrepareContext(ctx context.Context, q string) (sqldriver.Stmt, error) {
	return c.Conn.(sqldriver.ConnPrepareContext).PrepareContext(ctx, q)
}

func (c *badConn) BeginTx(ctx context.Context, opts sqldriver.TxOptions) (sqldriver.Tx, error) {
	return c.Conn.(sqldriver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *badConn) ResetSession(ctx context.Context) error {
	if c.bad.CompareAndSwap(true, false) {
		return sqldriver.ErrBadConn
	}
	return c.Conn.(sqldriver.SessionResetter).ResetSession(ctx)
}

// openFiles counts this process's file descriptors open on the store's
// file or its WAL.
func openFiles(t *testing.T, path string) int {
	t.Helper()
	real, err := filepath.EvalSymlinks(path)
	require.NoError(t, err)
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && (target == real || target == real+"-wal") {
			n++
		}
	}
	return n
}

// TestWriterReplacementClosesTheOldConnection: when database/sql replaces
// the writer's connection on its own (here a ResetSession answering
// ErrBadConn), the old connection's direct statements are finalized as it
// closes (directConn.Close), so it closes for real: the store holds as many
// files open after the replacement as before. Left unfinalized they kept
// it open as a zombie — its file descriptors on the store and its WAL —
// until the process ended, one more per replacement.
func TestWriterReplacementClosesTheOldConnection(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count open files in")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "replace.db")
	var bad atomic.Bool
	e := modernc()
	e.Open = func(path string, busy time.Duration, reader bool) (*sql.DB, error) {
		if reader {
			return openModernc(path, busy, reader)
		}
		return sql.OpenDB(directConnector{badConnector{dsn: moderncDSN(path, busy, reader), bad: &bad}, busy}), nil
	}
	d, err := OpenEngine(ctx, Config{Path: path, ReadConns: 1}, e)
	require.NoError(t, err)
	defer d.Close()
	req := migratedWorld(t, d)
	var pos int64 = 1
	appendOne := func() {
		t.Helper()
		got, err := appendOneTo(ctx, d, req)
		require.NoError(t, err)
		pos++
		require.Equal(t, pos, got.Position)
	}
	appendOne() // reads the head
	appendOne() // direct: its statements prepared on the writer's connection
	before := openFiles(t, path)
	for range 3 {
		bad.Store(true)
		appendOne() // on a new connection, which prepares its own
		require.False(t, bad.Load(), "database/sql reset the connection and was told it is bad")
		appendOne()
	}
	require.Equal(t, before, openFiles(t, path), "the replaced connections are closed, not zombies")
}
