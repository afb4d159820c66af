package sqlite

import (
	"database/sql"
	sqldriver "database/sql/driver"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers "sqlite"
)

// Engine is the SQLite library under the driver. The driver's SQL, its
// single writer and its error mapping are the same whichever library runs
// them; what differs is how a connection is opened and how a library
// reports a constraint, a lock or a missing table. Open uses modernc.org/sqlite
// (pure Go, no cgo); driver/libsql plugs in libSQL (cgo) through
// OpenEngine. The conformance suite runs on each.
type Engine struct {
	// Name names the library in errors ("modernc", "libsql"). The
	// driver's Name() stays "sqlite": the SQL dialect.
	Name string
	// Open returns a database/sql handle on the file at path with
	// busy_timeout busy, journal_mode WAL, synchronous FULL and foreign
	// keys on. The writer's (reader false) transactions are BEGIN
	// IMMEDIATE; a reader's connections are query_only.
	Open func(path string, busy time.Duration, reader bool) (*sql.DB, error)
	// OneStatementPerExec: the library runs only the first statement of a
	// script, so migrations are run statement by statement.
	OneStatementPerExec bool
	// IsUnique reports a primary key or unique constraint failure; IsBusy
	// SQLITE_BUSY (any extended code); IsMissingSchema a statement on a
	// table or column that does not exist ("no such table/column").
	IsUnique, IsBusy, IsMissingSchema func(error) bool
	// direct: a keyless append with a remembered head runs on the
	// writer's driver connection (direct.go), which Open makes through
	// directConnector. Set for modernc only, the library whose
	// connection's statements it was written against.
	direct bool
}

// walAutocheckpoint is the WAL size, in pages, past which the writer
// checkpoints (openModernc).
const walAutocheckpoint = 10000

// modernc is the default engine: modernc.org/sqlite, opened with its DSN
// pragmas and _txlock.
func modernc() Engine {
	return Engine{Name: "modernc", Open: openModernc,
		IsUnique: isUniqueViolationModernc, IsBusy: isBusyModernc, IsMissingSchema: missingSchemaModernc, direct: true}
}

func openModernc(path string, busy time.Duration, reader bool) (*sql.DB, error) {
	if reader {
		return sql.Open("sqlite", moderncDSN(path, busy, reader))
	}
	return sql.OpenDB(directConnector{dsnConnector{dsn: moderncDSN(path, busy, reader), drv: moderncDriver}, busy}), nil
}

// moderncDriver is modernc's registered driver, the one sql.Open("sqlite")
// opens connections with.
var moderncDriver = func() sqldriver.Driver {
	db, _ := sql.Open("sqlite", "") // a registered name: no error, no connection
	defer db.Close()
	return db.Driver()
}()

// moderncDSN is the data source name openModernc opens path with.
func moderncDSN(path string, busy time.Duration, reader bool) string {
	q := url.Values{}
	// busy_timeout first: switching a new file to WAL takes a lock, and
	// several processes opening one new file at once must wait for it,
	// not fail with SQLITE_BUSY.
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)") // fsync at every commit: a commit acknowledged is durable
	q.Add("_pragma", "foreign_keys(ON)")
	// Statement journals (and temp b-trees) in memory: a multi-row INSERT
	// inside a transaction (the event chunks, the enqueue chunks) opens a
	// statement journal, which by default spills to a temporary file past
	// 64 KiB — a third of a batch's time went to its write syscalls.
	// Nothing durable lives there: it only undoes one statement.
	q.Add("_pragma", "temp_store(MEMORY)")
	txlock := "immediate"
	if reader {
		q.Add("_pragma", "query_only(ON)")
		txlock = "deferred"
	} else {
		// The writer checkpoints (inline, after the commit that crosses
		// the mark) once the WAL holds walAutocheckpoint pages, not
		// SQLite's default 1,000: a batched event append writes about 200
		// pages (TestEventAppendWALFrames), so at 1,000 every fourth batch
		// paid a checkpoint — its page copies, its reads and two more
		// fsyncs (WAL, then the database file). Most of a batch's pages
		// are the same key-index leaves again, which one checkpoint copies
		// once however many commits rewrote them, so a rarer checkpoint
		// copies fewer pages in all. The WAL file grows to about 40 MiB
		// (it keeps its high-water size) and a crash recovery reads that
		// much. Counted in docs/BENCHMARKS.md (Must-show 3, Stop 25).
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", walAutocheckpoint))
	}
	q.Set("_txlock", txlock)
	return pathURI(path) + "?" + q.Encode() // the path escaped: path.go
}

// SplitStatements splits a migration script into its statements, each
// ending with its ";": a ";" inside a string literal or a quoted
// identifier does not split, and "--" comments are dropped. The migrations
// hold no trigger or other body with inner semicolons.
func SplitStatements(script string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" && s != ";" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == '\'' || c == '"':
			j := strings.IndexByte(script[i+1:], c)
			end := len(script)
			if j >= 0 {
				end = i + 1 + j + 1
			}
			cur.WriteString(script[i:end])
			i = end - 1
		case c == '-' && i+1 < len(script) && script[i+1] == '-':
			j := strings.IndexByte(script[i:], '\n')
			if j < 0 {
				return append(out, nonEmpty(cur.String())...)
			}
			i += j - 1 // the newline itself is kept
		case c == ';':
			cur.WriteByte(c)
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	return append(out, nonEmpty(cur.String())...)
}

func nonEmpty(s string) []string {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return []string{s}
}
