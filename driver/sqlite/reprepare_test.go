package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// TestRunStatementsAreNotReprepared: SQLite (3.54 here) plans a LIMIT
// bound to a bare parameter with the value bound at the time and marks
// the statement to be compiled again on every new binding of that
// parameter (sqlite3ExprIsInteger → sqlite3VdbeReprepareOnBind). A claim
// binds a new limit and a new now each time, so `LIMIT ?5` made every
// claim parse and plan its UPDATE again. `LIMIT +?5` is the same limit to
// SQLite's VM but not a bare parameter to its planner. This runs the
// prepared run statements that take a LIMIT three times each with new
// bindings, on the migrated schema, and reads SQLite's own count
// (SQLITE_STMTSTATUS_REPREPARE): it must stay 0.
func TestRunStatementsAreNotReprepared(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "reprepare.db")
	d, err := Open(ctx, Config{Path: path})
	require.NoError(t, err)
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	_, err = d.RunEnqueue(ctx, enqueueQ(20))
	require.NoError(t, err)
	require.NoError(t, d.Close())

	tls := libc.NewTLS()
	defer tls.Close()
	cstr := func(s string) uintptr {
		p, err := libc.CString(s)
		require.NoError(t, err)
		t.Cleanup(func() { libc.Xfree(tls, p) })
		return p
	}
	bp := tls.Alloc(16) // the sqlite3* and the sqlite3_stmt* written back
	defer tls.Free(16)
	require.EqualValues(t, sqlite3.SQLITE_OK, sqlite3.Xsqlite3_open_v2(tls, cstr(path), bp, sqlite3.SQLITE_OPEN_READWRITE, 0))
	db := libc.AtomicLoadPUintptr(bp)
	defer sqlite3.Xsqlite3_close_v2(tls, db)
	transient := ^uintptr(0) // SQLITE_TRANSIENT: SQLite copies the text

	for _, c := range []struct {
		name string
		sql  string
		bind func(st uintptr, i int)
	}{
		{"claim", runClaimSQL, func(st uintptr, i int) {
			sqlite3.Xsqlite3_bind_text(tls, st, 1, cstr("w"), -1, transient)
			sqlite3.Xsqlite3_bind_int64(tls, st, 2, int64(5e15+i))
			sqlite3.Xsqlite3_bind_text(tls, st, 3, cstr("q"), -1, transient)
			sqlite3.Xsqlite3_bind_int64(tls, st, 4, int64(4e15+i))
			sqlite3.Xsqlite3_bind_int64(tls, st, 5, int64(2+i))
		}},
		{"reclaim", runReclaimSQL, func(st uintptr, i int) {
			sqlite3.Xsqlite3_bind_int64(tls, st, 1, int64(6e15+i))
			sqlite3.Xsqlite3_bind_int64(tls, st, 2, int64(2+i))
		}},
	} {
		require.EqualValues(t, sqlite3.SQLITE_OK, sqlite3.Xsqlite3_prepare_v2(tls, db, cstr(c.sql), -1, bp+8, 0), c.name)
		st := libc.AtomicLoadPUintptr(bp + 8)
		rows := 0
		for i := range 3 {
			c.bind(st, i)
			rc := sqlite3.Xsqlite3_step(tls, st)
			for ; rc == sqlite3.SQLITE_ROW; rc = sqlite3.Xsqlite3_step(tls, st) {
				rows++
			}
			require.EqualValues(t, sqlite3.SQLITE_DONE, rc, c.name)
			require.EqualValues(t, sqlite3.SQLITE_OK, sqlite3.Xsqlite3_reset(tls, st), c.name)
		}
		require.Positive(t, rows, "%s: the statement took rows", c.name)
		require.Zero(t, sqlite3.Xsqlite3_stmt_status(tls, st, sqlite3.SQLITE_STMTSTATUS_REPREPARE, 0),
			"%s was compiled again on a new binding", c.name)
		sqlite3.Xsqlite3_finalize(tls, st)
	}
}
