package libsql

import (
	"context"
	"database/sql"
	"time"

	_ "github.com/tursodatabase/go-libsql" // registers the "libsql" database/sql driver

	"github.com/leasehold/leasehold/driver/sqlite"
)

// Config is the SQLite driver's: the file's path, the store clock, the
// read pool's size, the busy timeout, the logger.
type Config = sqlite.Config

// Open opens (creating if needed) the database file with libSQL. It does
// not migrate; call Migrate.
func Open(ctx context.Context, cfg Config) (*sqlite.Driver, error) {
	return sqlite.OpenEngine(ctx, cfg, Engine())
}

// Engine is libSQL as a sqlite.Engine.
func Engine() sqlite.Engine {
	return sqlite.Engine{Name: "libsql", Open: open, OneStatementPerExec: true,
		IsUnique: isUnique, IsBusy: isBusy, IsMissingSchema: isMissingSchema}
}

func open(path string, busy time.Duration, reader bool) (*sql.DB, error) {
	c, err := newConnector(path, busy, reader)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}
