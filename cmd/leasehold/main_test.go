package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"
)

func cli(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return out.String() + errOut.String(), code
}

// TestDemoExportAuditAndTamper is the tour of the README: the demo runs on
// an embedded store, its export audits clean, and the same file with one
// byte changed fails, naming the position.
func TestDemoExportAuditAndTamper(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "lh.db")
	out, code := cli(t, "demo", "--db", db, "--world", "w1")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "refused: stale_epoch")
	require.Contains(t, out, "OK: hash chain verified")

	file := filepath.Join(dir, "w1.jsonl")
	out, code = cli(t, "export", "--db", db, "--world", "w1", "--out", file)
	require.Equal(t, 0, code, out)
	out, code = cli(t, "audit", "--file", file)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "positions 5-7: epoch 2 held by node-a")

	b, err := os.ReadFile(file)
	require.NoError(t, err)
	i := bytes.Index(b, []byte(`"order":99`)) // the refused write is not in the journal…
	require.Equal(t, -1, i)
	i = bytes.Index(b, []byte(`order.shipped`)) // …the accepted one at position 6 is
	require.Positive(t, i)
	b[i] = 'O'
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, b, 0o600))
	out, code = cli(t, "audit", "--file", bad)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "FAIL position 6: hash")

	out, code = cli(t, "audit", "--file", file[:len(file)-6]+".missing")
	require.Equal(t, 1, code, out)

	// Import into a fresh store and audit it from there.
	db2 := filepath.Join(dir, "lh2.db")
	out, code = cli(t, "import", "--db", db2, "--file", file)
	require.Equal(t, 0, code, out)
	out, code = cli(t, "audit", "--db", db2, "--world", "w1")
	require.Equal(t, 0, code, out)
	require.True(t, strings.Contains(out, "9 entries verified"), out)
	out, code = cli(t, "import", "--db", db2, "--file", file)
	require.Equal(t, exitConflict, code, out)
	require.Contains(t, out, "conflict")
}

func TestMigrateIsIdempotentAndUnknownCommandFails(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lh.db")
	out, code := cli(t, "migrate", "--db", db)
	require.Equal(t, 0, code, out)
	// Every embedded migration, in order, from 1 (numbers may skip: each
	// change reserves its own); the second run applies none.
	m := regexp.MustCompile(`applied migrations \[1 2 3 4 5 6 7 8[ 0-9]*\]; schema at version (\d+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	out, code = cli(t, "migrate", "--db", db)
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "schema is current at version "+m[1])
	_, code = cli(t, "frobnicate")
	require.Equal(t, 2, code)
}

// TestHelpExitsZero: --help, at the top and on every command of the
// tree (walked, so a command added later is covered), is an answer, not
// a usage error: exit 0 and usage printed on stdout.
func TestHelpExitsZero(t *testing.T) {
	t.Parallel()
	cases := [][]string{{"--help"}, {"-h"}, {"help"}}
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			p := append(slices.Clone(path), sub.Name())
			cases = append(cases, append(slices.Clone(p), "--help"))
			walk(sub, p)
		}
	}
	walk(newRoot(&app{out: io.Discard, errOut: io.Discard}), nil)
	require.Greater(t, len(cases), 50, "the walk found the tree")
	for _, args := range cases {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)
		require.Equal(t, 0, code, "%v: %s %s", args, out.String(), errOut.String())
		require.Contains(t, strings.ToLower(out.String()), "usage", "%v printed no usage on stdout", args)
	}
	_, code := cli(t)
	require.Equal(t, 2, code, "no command at all is a usage error")
}

// TestExportOutIsWholeOrAbsent: `export --out` renames a synced temporary
// file into place, so the path holds a whole export ending in its end
// record, and no temporary file is left beside it; a failed export (no
// such world) leaves an earlier file as it was.
func TestExportOutIsWholeOrAbsent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "lh.db")
	out, code := cli(t, "demo", "--db", db, "--world", "w1")
	require.Equal(t, 0, code, out)
	file := filepath.Join(dir, "w1.jsonl")
	out, code = cli(t, "export", "--db", db, "--world", "w1", "--out", file)
	require.Equal(t, 0, code, out)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.True(t, strings.HasPrefix(lines[len(lines)-1], `{"end":{"world":"w1","entries":9,`), lines[len(lines)-1])

	out, code = cli(t, "export", "--db", db, "--world", "nope", "--out", file)
	require.Equal(t, exitNotFound, code, out)
	again, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, b, again, "a failed export leaves the earlier file as it was")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasSuffix(e.Name(), ".tmp"), "temporary file left: %s", e.Name())
	}
}
