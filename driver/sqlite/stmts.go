package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
)

// stmts are the hot path's statements, prepared once on the writer
// connection. modernc.org/sqlite parses a statement on every Exec with
// arguments otherwise, and parsing was about a third of an append's CPU.
type stmts struct {
	selectWorld, selectRejection, selectKey, condUpdate, insertEntry, insertRejection *sql.Stmt
	// guardTail and guardKnown insert a plan's first entry where its
	// tailGuard holds (guardedInsert); the Many ones its first
	// entryChunk entries.
	guardTail, guardKnown, guardTailMany, guardKnownMany *sql.Stmt
	// insertEntries inserts entryChunk entries in one statement, and
	// selectKeys looks up keyChunk keys: a batch of appends costs a
	// statement per chunk rather than one per entry.
	insertEntries, selectKeys *sql.Stmt
}

// entryChunk and keyChunk size the multi-row statements (11 and 1
// parameters a row; SQLite allows 32,766 in all).
const (
	entryChunk = 32
	keyChunk   = 64
)

func multiRow(head, row string, n int) string {
	var b strings.Builder
	b.WriteString(head)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	return b.String()
}

// stmtSQL is one statement a cache prepares: where it goes, and its text.
type stmtSQL struct {
	dst **sql.Stmt
	sql string
}

// prepareAll prepares each statement on db into its destination, for the
// statement caches (stmts, runStmts, effectStmts, queueStmts, readStmts).
// On the first failure it closes those it prepared, leaving every
// destination as it found it for the cache's close, and returns the error
// naming what was being prepared.
func prepareAll(ctx context.Context, db *sql.DB, what string, list []stmtSQL) error {
	for i, p := range list {
		st, err := db.PrepareContext(ctx, p.sql)
		if err != nil {
			for _, q := range list[:i] {
				(*q.dst).Close()
				*q.dst = nil
			}
			return fmt.Errorf("sqlite: preparing %s (is the schema migrated?): %w", what, err)
		}
		*p.dst = st
	}
	return nil
}

// selectWorldSQL and selectRunSQL read one world head and one run by key:
// the writer's prepared copies (stmts, runStmts), the reader's (readStmts)
// and getWorld's unprepared one inside a transaction share them.
var (
	selectWorldSQL = `SELECT ` + worldColumns + ` FROM world_heads WHERE id = ?`
	selectRunSQL   = `SELECT ` + runColumns + ` FROM runs WHERE id = ?`
)

type stmtCache struct {
	mu sync.Mutex // guards s; held only while preparing (in-process, no I/O wait on the store)
	s  *stmts
}

// prepared returns the writer's prepared statements, preparing them on first
// use (after Migrate has created the tables). A failed preparation is not
// cached, so a later call after migrating succeeds.
func (d *store) prepared(ctx context.Context) (*stmts, error) {
	d.stmts.mu.Lock()
	defer d.stmts.mu.Unlock()
	if d.stmts.s != nil {
		return d.stmts.s, nil
	}
	var s stmts
	if err := prepareAll(ctx, d.w, "statements", []stmtSQL{
		{&s.selectWorld, selectWorldSQL},
		{&s.selectRejection, `SELECT 1 FROM journal_rejections WHERE world = ? AND epoch = ? AND holder = ?`},
		{&s.selectKey, `SELECT position FROM journal_entries WHERE world = ? AND key = ? AND key <> ''`},
		{&s.condUpdate, condUpdate},
		{&s.guardTail, guardedInsert(1, false)},
		{&s.guardKnown, guardedInsert(1, true)},
		{&s.guardTailMany, guardedInsert(entryChunk, false)},
		{&s.guardKnownMany, guardedInsert(entryChunk, true)},
		{&s.insertEntry, insertEntrySQL},
		{&s.insertRejection, `INSERT OR IGNORE INTO journal_rejections (world, epoch, holder) VALUES (?, ?, ?)`},
		{&s.insertEntries, multiRow(insertEntryHead+" VALUES ", "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", entryChunk)},
		{&s.selectKeys, multiRow(`SELECT key, position FROM journal_entries WHERE world = ? AND key <> '' AND key IN (`, "?", keyChunk) + ")"},
	}); err != nil {
		return nil, err
	}
	d.stmts.s = &s
	return &s, nil
}

func (s *stmts) close() {
	for _, st := range []*sql.Stmt{s.selectWorld, s.selectRejection, s.selectKey, s.condUpdate, s.guardTail, s.guardKnown, s.guardTailMany, s.guardKnownMany, s.insertEntry, s.insertRejection, s.insertEntries, s.selectKeys} {
		if st != nil {
			st.Close()
		}
	}
}
