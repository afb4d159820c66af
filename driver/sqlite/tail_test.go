package sqlite

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// TestTailPlans: every statement that reads the journal's tail
// (world_heads, the guarded entry INSERTs, condUpdate) finds it by one
// probe of journal_entries' primary key, and its world by the worlds
// row's key (or worlds_home): no statement scans a table.
func TestTailPlans(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "p.db")})
	require.NoError(t, err)
	defer d.Close()
	migratedWorld(t, d)
	tx, err := d.BeginTx(ctx)
	require.NoError(t, err)
	defer tx.Rollback()
	for _, q := range []string{
		`SELECT ` + worldColumns + ` FROM world_heads WHERE id = ?`,
		`SELECT ` + worldColumns + ` FROM world_heads WHERE id > ? ORDER BY id LIMIT ?`,
		`SELECT ` + worldColumns + ` FROM world_heads WHERE home = ? AND id > ? ORDER BY id LIMIT ?`,
		guardedInsert(1, false), guardedInsert(1, true), guardedInsert(entryChunk, false), guardedInsert(entryChunk, true),
		condUpdate,
	} {
		rows, err := tx.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, make([]any, strings.Count(q, "?"))...)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &notused, &detail))
			plan = append(plan, detail)
		}
		require.NoError(t, rows.Err())
		rows.Close()
		all := strings.Join(plan, "\n")
		for _, p := range plan {
			if strings.HasPrefix(p, "SCAN") {
				require.Contains(t, p, "VALUES CLAUSE", "%s\n%s", q, all)
			}
		}
		require.Regexp(t, `SEARCH (journal_entries|m) USING PRIMARY KEY \(world=\?\)`, all, "%s\n%s", q, all)
		require.NotContains(t, all, "TEMP B-TREE", "%s\n%s", q, all)
	}
}

// TestJournalTailMigration: a store written before migration 0016 (its
// worlds rows carrying the tail, as the driver kept them then) gives the
// same answers after it — heads, lists, entries, a retried key's position —
// now reading the tail from each world's last entry; and the driver goes
// on appending to it, one chain.
func TestJournalTailMigration(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src, err := Open(ctx, Config{Path: filepath.Join(dir, "src.db")})
	require.NoError(t, err)
	defer src.Close()
	req := migratedWorld(t, src)
	_, err = src.WorldCreate(ctx, &driver.WorldCreateParams{World: "v", Home: "other", Term: time.Hour})
	require.NoError(t, err)
	keyed := func(k string) journal.AppendRequest { r := req; r.Key = k; return r }
	for _, ps := range []driver.JournalAppendParams{
		{World: "w", Requests: []journal.AppendRequest{req, req, keyed("k-1")}},
		{World: "w", Requests: []journal.AppendRequest{keyed("k-2"), req}},
		{World: "v", Requests: []journal.AppendRequest{func() journal.AppendRequest { r := req; r.Holder = "other"; return r }()}},
	} {
		out, err := src.JournalAppend(ctx, &ps)
		require.NoError(t, err)
		for _, o := range out {
			require.NoError(t, o.Err)
		}
	}

	// The store before 0016: the older migrations, recorded as the runner
	// records them, and src's rows with the tail in the worlds row.
	old := filepath.Join(dir, "old.db")
	db, err := sql.Open("sqlite", old)
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	require.NoError(t, err)
	slices.Sort(names)
	_, err = db.ExecContext(ctx, `CREATE TABLE leasehold_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`)
	require.NoError(t, err)
	reached := false
	for _, n := range names {
		base := strings.TrimSuffix(filepath.Base(n), ".sql")
		if strings.HasPrefix(base, "0016_") {
			reached = true
			break
		}
		b, err := migrationFS.ReadFile(n)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, string(b))
		require.NoError(t, err, n)
		v, err := strconv.Atoi(base[:4])
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, `INSERT INTO leasehold_migrations VALUES (?, ?, 0)`, v, base)
		require.NoError(t, err)
	}
	require.True(t, reached)
	_, err = db.ExecContext(ctx, `ATTACH ? AS src`, filepath.Join(dir, "src.db"))
	require.NoError(t, err)
	tables, err := db.QueryContext(ctx, `SELECT name FROM src.sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite%' AND name <> 'leasehold_migrations' ORDER BY name`)
	require.NoError(t, err)
	var names2 []string
	for tables.Next() {
		var n string
		require.NoError(t, tables.Scan(&n))
		names2 = append(names2, n)
	}
	require.NoError(t, tables.Err())
	tables.Close()
	require.Contains(t, names2, "journal_entries")
	for _, n := range names2 {
		_, err = db.ExecContext(ctx, `INSERT OR REPLACE INTO main.`+n+` SELECT * FROM src.`+n)
		require.NoError(t, err, n)
	}
	_, err = db.ExecContext(ctx, `UPDATE main.worlds SET (position, last_hash, last_time) = (
		SELECT position, hash, store_time FROM main.journal_entries e WHERE e.world = worlds.id ORDER BY position DESC LIMIT 1)`)
	require.NoError(t, err)
	var rows int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM main.journal_entries`).Scan(&rows))
	require.Equal(t, 8, rows, "2 creates, 6 appends")
	_, err = db.ExecContext(ctx, `DETACH src`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	d, err := Open(ctx, Config{Path: old})
	require.NoError(t, err)
	defer d.Close()
	res, err := d.Migrate(ctx)
	require.NoError(t, err)
	require.Equal(t, []int{16}, res.Applied)
	for _, id := range []string{"w", "v"} {
		want, err := src.WorldGet(ctx, &driver.WorldGetParams{World: id})
		require.NoError(t, err)
		got, err := d.WorldGet(ctx, &driver.WorldGetParams{World: id})
		require.NoError(t, err)
		require.Equal(t, want, got, id)
		wantEs, err := src.JournalRead(ctx, &driver.JournalReadParams{World: id, From: 1, Limit: 100})
		require.NoError(t, err)
		gotEs, err := d.JournalRead(ctx, &driver.JournalReadParams{World: id, From: 1, Limit: 100})
		require.NoError(t, err)
		require.Equal(t, wantEs, gotEs, id)
	}
	for _, lp := range []driver.WorldListParams{{Limit: 10}, {Home: "other", Limit: 10}, {After: "v", Limit: 10}} {
		want, err := src.WorldList(ctx, &lp)
		require.NoError(t, err)
		got, err := d.WorldList(ctx, &lp)
		require.NoError(t, err)
		require.Equal(t, want, got, "%+v", lp)
	}
	// A retried key answers its first position; a new append goes on
	// from the last entry.
	out, err := d.JournalAppend(ctx, &driver.JournalAppendParams{World: "w", Requests: []journal.AppendRequest{keyed("k-1"), req}})
	require.NoError(t, err)
	require.NoError(t, out[0].Err)
	require.NoError(t, out[1].Err)
	require.Equal(t, int64(4), out[0].Position, "k-1's first position")
	require.Equal(t, int64(7), out[1].Position)
	es, err := d.JournalRead(ctx, &driver.JournalReadParams{World: "w", From: 1, Limit: 100})
	require.NoError(t, err)
	rep := journal.Audit(es)
	require.Nil(t, rep.Violation)
	require.Equal(t, int64(7), rep.Final.Position)
}
