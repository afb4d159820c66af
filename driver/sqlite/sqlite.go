package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
)

// Config configures the SQLite driver. Zero values mean the defaults.
type Config struct {
	// Path of the database file: a file name, not a URI (any character a
	// file name may hold is taken literally). Required; the CLI defaults
	// it to ./leasehold.db. Empty, NUL and ":memory:" are refused with
	// ErrInvalid (see path.go for why there is no in-memory store).
	Path string
	// Clock is the store clock. Defaults to the real clock.
	Clock clock.Clock
	// ReadConns is the size of the read pool. Defaults to 4.
	ReadConns int
	// BusyTimeout is how long a writer waits for another process's lock.
	// Defaults to 10s.
	BusyTimeout time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// store is the SQLite driver's SQL and error mapping. It assumes valid,
// normalized input: it is reached only through Driver (driver.Validating).
type store struct {
	w, r  *sql.DB
	clock clock.Clock
	log   *slog.Logger
	stmts stmtCache
	// runStmts are the run statements (runs_stmts.go).
	runStmts runStmtCache
	// effectStmts are the effect and event statements (effects_stmts.go).
	effectStmts effectStmtCache
}

var _ driver.Driver = (*store)(nil)

// Open opens (creating if needed) the database file. It does not migrate;
// call Migrate. The driver it returns validates every call's input before
// any SQL (driver.Validating).
func Open(ctx context.Context, cfg Config) (*Driver, error) {
	s, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return newDriver(s), nil
}

func open(ctx context.Context, cfg Config) (*store, error) {
	if err := validatePath(cfg.Path); err != nil { // path.go
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.ReadConns <= 0 {
		cfg.ReadConns = 4
	}
	if cfg.BusyTimeout <= 0 {
		cfg.BusyTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	dsn := func(txlock string, extra ...string) string {
		q := url.Values{}
		// busy_timeout first: switching a new file to WAL takes a lock, and
		// several processes opening one new file at once must wait for it,
		// not fail with SQLITE_BUSY.
		q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", cfg.BusyTimeout.Milliseconds()))
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(FULL)") // fsync at every commit: a commit acknowledged is durable
		q.Add("_pragma", "foreign_keys(ON)")
		for _, p := range extra {
			q.Add("_pragma", p)
		}
		q.Set("_txlock", txlock)
		return pathURI(cfg.Path) + "?" + q.Encode() // the path escaped: path.go
	}
	w, err := sql.Open("sqlite", dsn("immediate"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	// The single writer: every write transaction queues for this one
	// connection and takes SQLite's write lock with BEGIN IMMEDIATE.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := pingWhileBusy(ctx, w, cfg.BusyTimeout); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	if err := checkOpened(ctx, w, cfg.Path); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	r, err := sql.Open("sqlite", dsn("deferred", "query_only(ON)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	r.SetMaxOpenConns(cfg.ReadConns)
	r.SetMaxIdleConns(cfg.ReadConns)
	return &store{w: w, r: r, clock: cfg.Clock, log: cfg.Logger}, nil
}

// pingWhileBusy opens the writer's connection, retrying an SQLITE_BUSY
// that the busy handler does not cover (isBusy) for up to the busy
// timeout: several processes opening and closing one file at once — the
// CLI beside a running server, concurrent migrators — must wait, not fail.
func pingWhileBusy(ctx context.Context, w *sql.DB, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := w.PingContext(ctx)
		if err == nil || !isBusy(err) || time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// Name implements driver.Driver.
func (d *store) Name() string { return "sqlite" }

// Close implements driver.Driver.
func (d *store) Close() error {
	d.stmts.mu.Lock()
	if d.stmts.s != nil {
		d.stmts.s.close()
		d.stmts.s = nil
	}
	d.stmts.mu.Unlock()
	d.runStmts.mu.Lock()
	if d.runStmts.s != nil {
		d.runStmts.s.close()
		d.runStmts.s = nil
	}
	d.runStmts.mu.Unlock()
	d.effectStmts.mu.Lock()
	if d.effectStmts.s != nil {
		d.effectStmts.s.close()
		d.effectStmts.s = nil
	}
	d.effectStmts.mu.Unlock()
	return errorsJoin(d.r.Close(), d.w.Close())
}

// StoreNow implements driver.Driver: the owner's clock.
func (d *store) StoreNow(context.Context) (time.Time, error) { return d.clock.Now(), nil }

// Settings implements driver.Driver, reading the pragmas of the writer
// connection (pragmas are per connection).
func (d *store) Settings(ctx context.Context) (driver.Settings, error) {
	s := driver.Settings{Driver: d.Name(), Values: map[string]string{}}
	var mode string
	var sync int
	if err := d.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return s, fmt.Errorf("sqlite: reading journal_mode: %w", err)
	}
	if err := d.w.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
		return s, fmt.Errorf("sqlite: reading synchronous: %w", err)
	}
	names := map[int]string{0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
	s.Values["journal_mode"] = mode
	s.Values["synchronous"] = fmt.Sprintf("%d (%s)", sync, names[sync])
	return s, nil
}
