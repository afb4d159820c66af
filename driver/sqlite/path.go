package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/leasehold/leasehold/journal"
)

// Config.Path is a file name, never a URI. The driver opens SQLite with a
// file: URI (so its pragmas and transaction mode travel with every
// connection of the pool), and in a URI '?' starts the query, '#' the
// fragment, '%' an escape and a leading "//" an authority: pasted in
// unescaped, "a?b.db" opened "a" with its own parameters (journal_mode
// delete: no WAL) and "c#d.db" opened "c". So the path is percent-encoded
// byte for byte (pathURI), and after opening the driver checks that it
// holds exactly the file named, in WAL mode (checkOpened).
//
// Refused with ErrInvalid, before anything is created: an empty path, a
// path holding NUL (no file system can name it; SQLite would cut the name
// there), a path ending in a separator (a directory), a "file:" URI (the
// caller meant parameters the driver would silently not apply), and the
// in-memory database. ":memory:" is refused rather than supported: in memory every connection of the pool is its own
// database unless the cache is shared, WAL is impossible there (SPEC §1
// requires WAL with synchronous=FULL) and nothing is durable, so it would
// be a different store with different guarantees behind the same driver.
// A test wanting a throwaway store opens a file in t.TempDir().
func validatePath(path string) error {
	switch {
	case path == "":
		return &journal.InputError{Field: "sqlite Config.Path", Problem: "must name a database file"}
	case strings.IndexByte(path, 0) >= 0:
		return &journal.InputError{Field: "sqlite Config.Path", Problem: fmt.Sprintf("%q holds a NUL byte, which no file name can", path)}
	case path == ":memory:":
		return &journal.InputError{Field: "sqlite Config.Path", Problem: fmt.Sprintf("%q: in-memory databases are not supported (one database per connection, no WAL, nothing durable); use a file, e.g. in a temporary directory", path)}
	case strings.HasPrefix(path, "file:"):
		// Taken literally this would name a file called "file:…", which is
		// never what a caller holding a URI meant; say so instead.
		return &journal.InputError{Field: "sqlite Config.Path", Problem: fmt.Sprintf("%q is a URI: Config.Path takes a file name (the driver sets its own parameters; name a file that begins with \"file:\" as ./file:…)", path)}
	case strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(filepath.Separator)):
		return &journal.InputError{Field: "sqlite Config.Path", Problem: fmt.Sprintf("%q names a directory, not a file", path)}
	}
	return nil
}

// pathURI is the file: URI that names exactly the file path: every byte
// outside the unreserved set and '/' is percent-encoded, so SQLite's URI
// decoding gives back the path byte for byte. An absolute path gets an
// empty authority ("file:///…"), so a path beginning "//" is not read as
// a host.
func pathURI(path string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.WriteString("file:")
	if strings.HasPrefix(path, "/") {
		b.WriteString("//")
	}
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("-._~/", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// checkOpened verifies, on the writer connection, that the database SQLite
// opened is the file at path and that it runs in WAL mode: the two things
// a misread URI silently broke.
func checkOpened(ctx context.Context, w *sql.DB, path string) error {
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("reading journal_mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal_mode is %q, not wal", mode)
	}
	var seq int
	var name, file string
	if err := w.QueryRowContext(ctx, "SELECT seq, name, file FROM pragma_database_list WHERE name = 'main'").Scan(&seq, &name, &file); err != nil {
		return fmt.Errorf("reading the database file name: %w", err)
	}
	want, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("the database file: %w", err)
	}
	got, err := os.Stat(file)
	if err != nil || !os.SameFile(want, got) {
		return fmt.Errorf("SQLite opened %q, not the file named %q", file, path)
	}
	if !want.Mode().IsRegular() {
		return fmt.Errorf("%q is not a regular file", path)
	}
	return nil
}
