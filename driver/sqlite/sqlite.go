package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver (engine.go)

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
	eng   Engine // the SQLite library: engine.go
	stmts stmtCache
	// heads are the world heads this store last committed (headcache.go).
	heads heads
	// runStmts are the run statements (runs_stmts.go).
	runStmts runStmtCache
	// effectStmts are the effect and event statements (effects_stmts.go).
	effectStmts effectStmtCache
	// queueStmts are the queue control statements (queues_stmts.go).
	queueStmts queueStmtCache
	// readStmts are the reader pool's reads by key (read_stmts.go).
	readStmts readStmtCache
	// group shares writer transactions between the run path's enqueues,
	// claims and completion batches (group.go).
	group groupCommit
	// notifier wakes this process's event subscribers after an append
	// commits (notify.go).
	notifier localNotifier
	// onBusyBegin is a test hook (nil otherwise): a direct append's BEGIN
	// found the write lock taken and now waits for it (beginNow).
	onBusyBegin func()
}

var _ driver.Driver = (*store)(nil)

// Open opens (creating if needed) the database file. It does not migrate;
// call Migrate. The driver it returns validates every call's input before
// any SQL (driver.Validating).
func Open(ctx context.Context, cfg Config) (*Driver, error) {
	return OpenEngine(ctx, cfg, modernc())
}

// OpenEngine is Open on another SQLite library (driver/libsql's). Every
// field of e is required.
func OpenEngine(ctx context.Context, cfg Config, e Engine) (*Driver, error) {
	if e.Open == nil || e.IsUnique == nil || e.IsBusy == nil || e.IsMissingSchema == nil {
		return nil, fmt.Errorf("sqlite: engine %q: Open, IsUnique, IsBusy and IsMissingSchema are required", e.Name)
	}
	s, err := open(ctx, cfg, e)
	if err != nil {
		return nil, err
	}
	return newDriver(s), nil
}

func open(ctx context.Context, cfg Config, eng Engine) (*store, error) {
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
	w, err := eng.Open(cfg.Path, cfg.BusyTimeout, false)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	// The single writer: every write transaction queues for this one
	// connection and takes SQLite's write lock with BEGIN IMMEDIATE.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := pingWhileBusy(ctx, w, cfg.BusyTimeout, eng.IsBusy); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	if err := checkOpened(ctx, w, cfg.Path); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	r, err := eng.Open(cfg.Path, cfg.BusyTimeout, true)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", cfg.Path, err)
	}
	r.SetMaxOpenConns(cfg.ReadConns)
	r.SetMaxIdleConns(cfg.ReadConns)
	return &store{w: w, r: r, clock: cfg.Clock, log: cfg.Logger, eng: eng}, nil
}

// pingWhileBusy opens the writer's connection, retrying an SQLITE_BUSY
// that the busy handler does not cover (isBusy) for up to the busy
// timeout: several processes opening and closing one file at once — the
// CLI beside a running server, concurrent migrators — must wait, not fail.
func pingWhileBusy(ctx context.Context, w *sql.DB, timeout time.Duration, isBusy func(error) bool) error {
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
	d.closeQueueStmts()
	d.closeReadStmts()
	d.notifier.close()
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
