package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEventsByPositionMigration: migration 0015 moves the events stored
// under 0014 (a pos column and its index) into the table keyed by id, and
// the queue-wide order — (pos, run, fence, seq) before, id after — and
// every event's position come through unchanged, the events stored before
// positions (pos 0) included, first.
func TestEventsByPositionMigration(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db"))
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	require.NoError(t, err)
	slices.Sort(names)
	run := func(name string) {
		b, err := migrationFS.ReadFile(name)
		require.NoError(t, err)
		_, err = db.ExecContext(ctx, string(b))
		require.NoError(t, err, name)
	}
	var at0015 int
	for i, n := range names {
		if strings.Contains(n, "/0015_") {
			at0015 = i
			break
		}
		run(n)
	}
	require.NotZero(t, at0015)

	// Under 0014: three rows from before positions, two transactions'.
	type ev struct{ pos, run, fence, seq int64 }
	stored := []ev{{0, 9, 1, 1}, {0, 2, 1, 2}, {0, 2, 1, 1}, {1, 5, 1, 1}, {1, 3, 2, 1}, {2, 3, 2, 2}, {2, 1, 1, 1}}
	for _, e := range stored {
		_, err := db.ExecContext(ctx, `INSERT INTO run_events (run_id, fence, seq, kind, payload, created_at, pos) VALUES (?, ?, ?, 'k', X'7B7D', 1, ?)`,
			e.run, e.fence, e.seq, e.pos)
		require.NoError(t, err)
	}
	_, err = db.ExecContext(ctx, `UPDATE run_event_position SET pos = 2`)
	require.NoError(t, err)
	run(names[at0015])

	rows, err := db.QueryContext(ctx, `SELECT `+eventPosSQL+`, e.run_id, e.fence, e.seq FROM run_events e ORDER BY e.id`)
	require.NoError(t, err)
	defer rows.Close()
	var got []ev
	for rows.Next() {
		var e ev
		require.NoError(t, rows.Scan(&e.pos, &e.run, &e.fence, &e.seq))
		got = append(got, e)
	}
	require.NoError(t, rows.Err())
	want := slices.Clone(stored)
	slices.SortFunc(want, func(a, b ev) int {
		return strings.Compare(fmt.Sprintf("%020d%020d%020d%020d", a.pos, a.run, a.fence, a.seq),
			fmt.Sprintf("%020d%020d%020d%020d", b.pos, b.run, b.fence, b.seq))
	})
	require.Equal(t, want, got)
	var negative int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM run_events WHERE id < 0`).Scan(&negative))
	require.Equal(t, 3, negative, "the rows from before positions sort first, below every position's ids")
	_, err = db.ExecContext(ctx, `INSERT INTO run_events (id, run_id, fence, seq, kind, payload, created_at) VALUES (?, 5, 1, 1, 'k', X'7B7D', 1)`, eventID(3, 0))
	require.ErrorContains(t, err, "UNIQUE", "the key is still unique")
}
