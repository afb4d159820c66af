package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
)

// FuzzAuditFile runs `leasehold audit --file F [--positions]` on fuzzed
// exports. It opens no store. The exit code is 0 exactly when the library
// audit of the file verifies, else 1 (never a usage error, never a panic),
// and the report is always printed, naming the failing line or position.
// Whole exports are seeded from testdata/fuzz/FuzzAuditFile.
func FuzzAuditFile(f *testing.F) {
	f.Add([]byte(""), false)
	f.Add([]byte("{}\n"), true)
	f.Add([]byte("not json"), false)
	f.Fuzz(func(t *testing.T, data []byte, positions bool) {
		path := filepath.Join(t.TempDir(), "export.jsonl")
		require.NoError(t, os.WriteFile(path, data, 0o600))
		args := []string{"audit", "--file", path}
		if positions {
			args = append(args, "--positions")
		}
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)

		rep, err := leasehold.AuditJSONL(bytes.NewReader(data))
		want := 1
		if err == nil && rep.OK() {
			want = 0
		}
		require.Equal(t, want, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		require.Empty(t, errOut.String())
		require.True(t, strings.HasPrefix(out.String(), "audit of world "), out.String())
		switch {
		case err != nil:
			require.Contains(t, out.String(), "FAIL "+path+" line ")
		case rep.OK():
			require.Contains(t, out.String(), "OK: hash chain verified")
		default:
			require.Contains(t, out.String(), "FAIL position ")
		}
	})
}

// FuzzStoreFor: --db selects Postgres exactly for a postgres:// or
// postgresql:// URL, else names a SQLite file; the flag's value is passed on
// unchanged either way.
func FuzzStoreFor(f *testing.F) {
	for _, s := range []string{"leasehold.db", "postgres://u@h/db", "postgresql://h/db", "postgres:/x", "POSTGRES://h", "", "/tmp/x.db", "postgres://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, db string) {
		got := storeFor(db)
		if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
			require.Equal(t, store{postgresURL: db}, got)
		} else {
			require.Equal(t, store{path: db}, got)
		}
	})
}

// TestStoreForBarePostgresURL: the bare scheme is a Postgres URL (pgx
// reads it as "the default server"), not a SQLite file named
// "postgres://" (an earlier configFor asked for more than the scheme).
func TestStoreForBarePostgresURL(t *testing.T) {
	t.Parallel()
	for _, db := range []string{"postgres://", "postgresql://"} {
		require.Equal(t, store{postgresURL: db}, storeFor(db))
	}
}
