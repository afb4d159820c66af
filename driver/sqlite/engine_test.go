package sqlite

import (
	"io/fs"
	"strings"
	"testing"

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
