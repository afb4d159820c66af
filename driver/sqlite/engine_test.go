package sqlite

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSplitStatements: a script splits at each line-ending ";" outside a
// string, comment lines dropped; a ";" inside a string stays.
func TestSplitStatements(t *testing.T) {
	got := SplitStatements("-- a comment; with a semicolon;\nCREATE TABLE a (x TEXT DEFAULT 'p;\nq;', -- it's a comment; still\n y \"b;c\");\n\nCREATE INDEX i ON a (x);\n-- end\n")
	require.Equal(t, []string{"CREATE TABLE a (x TEXT DEFAULT 'p;\nq;', \n y \"b;c\");", "CREATE INDEX i ON a (x);"}, got)
	require.Empty(t, SplitStatements("-- only a comment\n\n"))
}

// TestEveryMigrationSplits: each shipped migration splits into statements
// that each end with ";" and hold no other line-ending ";" — what an
// engine that runs one statement per Exec needs.
func TestEveryMigrationSplits(t *testing.T) {
	files, err := fs.Glob(migrationFS, "migrations/*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := fs.ReadFile(migrationFS, f)
		require.NoError(t, err)
		stmts := SplitStatements(string(b))
		require.NotEmpty(t, stmts, f)
		for _, s := range stmts {
			require.True(t, strings.HasSuffix(s, ";"), "%s: %q", f, s)
		}
	}
}

// TestWriterAutocheckpoint: the writer's connections checkpoint at
// walAutocheckpoint pages, not SQLite's default 1,000 (a batched event
// append writes about 200 pages: TestEventAppendWALFrames).
func TestWriterAutocheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ck.db")
	w, err := openModernc(path, time.Second, false)
	require.NoError(t, err)
	defer w.Close()
	var pages int
	require.NoError(t, w.QueryRow("PRAGMA wal_autocheckpoint").Scan(&pages))
	require.Equal(t, walAutocheckpoint, pages)
}
