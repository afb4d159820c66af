package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
)

// Config configures the Postgres driver. Zero values mean the defaults.
type Config struct {
	// URL is the pgx connection string (URL or key=value form), including
	// multi-host strings for an HA pair. Required.
	URL string
	// Schema is set as the search_path of every connection, so the driver's
	// tables live there. The schema must exist. Defaults to "": the server's
	// default search_path.
	Schema string
	// StoreClock overrides the store clock. Defaults to nil: the store's own
	// clock_timestamp(), read inside the transaction after the head row is
	// locked. Tests inject a fake (as River's coalesce(@now, now()) does) so
	// they can move lease expiry without sleeping; production leaves it nil.
	StoreClock clock.Clock
	// CriticalConns is the size of the reserved pool that carries every
	// SyncCritical write (create, grant, renew, revoke, handoff, sweep,
	// import, and every run write), so batch traffic can never starve
	// them. Defaults to 4.
	CriticalConns int32
	// GeneralConns is the size of the pool for DurableBatched writes
	// (journal appends, run event batches) and reads. Defaults to 8.
	GeneralConns int32
	// AcquireTimeout bounds the wait for a pooled connection. It must be
	// shorter than StatementTimeout so a starved write fails fast and is
	// retried. Defaults to 2s.
	AcquireTimeout time.Duration
	// StatementTimeout is the server-side statement_timeout of every
	// connection, and also its idle_in_transaction_session_timeout, so a
	// paused client cannot hold a world's head row locked for longer.
	// Defaults to 10s.
	StatementTimeout time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultCriticalConns    = 4
	DefaultGeneralConns     = 8
	DefaultAcquireTimeout   = 2 * time.Second
	DefaultStatementTimeout = 10 * time.Second
)

// withDefaults returns c with zero values replaced by the defaults.
func (c Config) withDefaults() Config {
	if c.CriticalConns == 0 {
		c.CriticalConns = DefaultCriticalConns
	}
	if c.GeneralConns == 0 {
		c.GeneralConns = DefaultGeneralConns
	}
	if c.AcquireTimeout == 0 {
		c.AcquireTimeout = DefaultAcquireTimeout
	}
	if c.StatementTimeout == 0 {
		c.StatementTimeout = DefaultStatementTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate checks c after defaults are applied, naming the offending values.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.URL == "":
		return errors.New("postgres: Config.URL is required")
	case c.CriticalConns < 1:
		return fmt.Errorf("postgres: Config.CriticalConns %d must be at least 1", c.CriticalConns)
	case c.GeneralConns < 1:
		return fmt.Errorf("postgres: Config.GeneralConns %d must be at least 1", c.GeneralConns)
	case c.StatementTimeout < time.Millisecond:
		return fmt.Errorf("postgres: Config.StatementTimeout %s must be at least 1ms", c.StatementTimeout)
	case c.AcquireTimeout <= 0 || c.AcquireTimeout >= c.StatementTimeout:
		return fmt.Errorf("postgres: Config.AcquireTimeout %s must be positive and shorter than StatementTimeout %s",
			c.AcquireTimeout, c.StatementTimeout)
	}
	return nil
}

// pingAfterIdle is how long a pooled connection may sit idle before it is
// pinged on acquire (pgxpool's default is one second).
const pingAfterIdle = time.Minute

// store is the Postgres driver's SQL and error mapping. It assumes valid,
// normalized input: it is reached only through Driver (driver.Validating).
// It is safe for concurrent use; it holds no
// Go lock of its own (the pools have theirs, never across a round trip).
type store struct {
	critical *pgxpool.Pool // SyncCritical writes only
	general  *pgxpool.Pool // DurableBatched writes and reads
	clock    clock.Clock   // nil: the store's clock_timestamp()
	cfg      Config
	log      *slog.Logger

	// listenCfg configures the dedicated connections of RunEventsNotify
	// (the pools' session settings, never a pooled connection).
	listenCfg *pgx.ConnConfig
	// closing ends every RunEventsNotify listener at Close, which waits
	// for them (listeners) after setting closed under lmu.
	closing   context.Context
	closeAll  context.CancelFunc
	lmu       sync.Mutex
	closed    bool
	listeners sync.WaitGroup

	keys keyCache // the key each world's epoch carries, for signed appends
	// limited remembers the queues whose last claim found them limited
	// (queues_claim.go): a hint that picks the claim path, never a rule.
	limited sync.Map

	// beforeSend and afterSend, when set (tests only, before the store is
	// used), run just before a journal append's batch is sent and just
	// after, before its answer is read: stand-ins for a client descheduled
	// there.
	beforeSend, afterSend func()
}

var _ driver.Driver = (*store)(nil)

// Open creates the two pools and checks that the server answers and, when
// Config.Schema is set, that the schema exists. It does not migrate; call
// Migrate.
//
// The driver it returns validates every call's input before any SQL
// (driver.Validating).
func Open(ctx context.Context, cfg Config) (*Driver, error) {
	s, err := openPools(ctx, cfg, nil)
	if err != nil {
		return nil, err
	}
	return newDriver(s), nil
}

// openPools is Open with a hook that may adjust both pools' configs (tests
// wrap the network connection to count round trips).
func openPools(ctx context.Context, cfg Config, tweak func(*pgxpool.Config)) (*store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	base, err := parseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	// Durability is part of the contract (SPEC §1): every session commits
	// synchronously whatever the server or role default says.
	rp := base.ConnConfig.RuntimeParams
	rp["synchronous_commit"] = "on"
	ms := strconv.FormatInt(cfg.StatementTimeout.Milliseconds(), 10)
	rp["statement_timeout"] = ms
	rp["idle_in_transaction_session_timeout"] = ms
	if cfg.Schema != "" {
		rp["search_path"] = pgx.Identifier{cfg.Schema}.Sanitize()
	}
	// pgxpool pings a connection idle for over a second before handing it
	// out: with lease writes a few seconds apart that is one more round trip
	// on nearly every SyncCritical write. A connection that died while idle
	// fails the next request before any of it reaches the server, so nothing
	// is committed and the caller's retry is safe; ping only connections
	// idle long enough to have been cut by a middlebox.
	base.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool {
		return p.IdleDuration > pingAfterIdle
	}
	// When a caller's context ends mid-statement, pgx's default closes the
	// connection. We do not use CancelRequestContextWatcherHandler: its
	// cancel request is asynchronous and can land on the next statement of
	// the reused connection — another caller's batch (jackc/pgx#2534).
	critCfg, genCfg := base.Copy(), base.Copy()
	critCfg.MaxConns, genCfg.MaxConns = cfg.CriticalConns, cfg.GeneralConns
	if tweak != nil {
		tweak(critCfg)
		tweak(genCfg)
	}
	d := &store{clock: cfg.StoreClock, cfg: cfg, log: cfg.Logger, listenCfg: base.ConnConfig.Copy()}
	d.closing, d.closeAll = context.WithCancel(context.Background())
	if d.critical, err = pgxpool.NewWithConfig(ctx, critCfg); err != nil {
		return nil, fmt.Errorf("postgres: critical pool: %w", err)
	}
	if d.general, err = pgxpool.NewWithConfig(ctx, genCfg); err != nil {
		d.critical.Close()
		return nil, fmt.Errorf("postgres: general pool: %w", err)
	}
	if err := d.check(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// check proves the server answers and the configured schema exists:
// current_schema() is the first schema of the search_path that exists, so
// it is NULL when Config.Schema names none.
func (d *store) check(ctx context.Context) error {
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return fmt.Errorf("postgres: open: %w", err)
	}
	defer conn.Release()
	var schema *string
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("postgres: open: %w", err)
	}
	if d.cfg.Schema != "" && (schema == nil || *schema != d.cfg.Schema) {
		return fmt.Errorf("postgres: open: schema %q does not exist (create it first): %w", d.cfg.Schema, driver.ErrNotFound)
	}
	return nil
}

// Name implements driver.Driver.
func (d *store) Name() string { return "postgres" }

// Close implements driver.Driver. It waits for acquired connections to be
// released, and ends the RunEventsNotify listeners, waiting for them.
func (d *store) Close() error {
	d.lmu.Lock()
	d.closed = true
	d.lmu.Unlock()
	d.closeAll()
	d.listeners.Wait()
	d.general.Close()
	d.critical.Close()
	return nil
}

// critical reports whether a write must go through the reserved pool: the
// params' durability class decides, not the method.
func critical(p lease.Classed) bool { return p.Class() == lease.SyncCritical }

// acquire takes a connection from the critical or the general pool, waiting
// at most Config.AcquireTimeout.
func (d *store) acquire(ctx context.Context, crit bool) (*pgxpool.Conn, error) {
	pool, name := d.general, "general"
	if crit {
		pool, name = d.critical, "critical"
	}
	actx, cancel := context.WithTimeout(ctx, d.cfg.AcquireTimeout)
	defer cancel()
	conn, err := pool.Acquire(actx)
	if err != nil {
		if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("no %s connection free within %s: %w", name, d.cfg.AcquireTimeout, err)
		}
		return nil, fmt.Errorf("acquiring a %s connection: %w", name, err)
	}
	return conn, nil
}

// StoreNow implements driver.Driver: clock_timestamp() of the server (the
// wall clock now, not the transaction start that now() would give), or the
// injected StoreClock.
func (d *store) StoreNow(ctx context.Context) (time.Time, error) {
	if d.clock != nil {
		return d.clock.Now(), nil
	}
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return time.Time{}, fmt.Errorf("postgres: reading the store clock: %w", err)
	}
	defer conn.Release()
	var now time.Time
	if err := conn.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("postgres: reading the store clock: %w", err)
	}
	return now.UTC(), nil
}

// settingNames are the durability settings Settings reports, read with SHOW
// so they are the values the server applies to this driver's sessions.
var settingNames = []string{
	"synchronous_commit", "fsync", "wal_sync_method", "full_page_writes",
	"synchronous_standby_names", "server_version",
}

// Settings implements driver.Driver in one pipelined round trip. It is a
// read, so it uses the general pool; both pools' sessions are configured
// alike (TestSettingsReportTheSessionsDurability checks both).
func (d *store) Settings(ctx context.Context) (driver.Settings, error) {
	s := driver.Settings{Driver: d.Name(), Values: map[string]string{}}
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return s, fmt.Errorf("postgres: reading settings: %w", err)
	}
	defer conn.Release()
	b := &pgx.Batch{}
	for _, name := range settingNames {
		b.Queue("SHOW " + name)
	}
	br := conn.SendBatch(ctx, b)
	for _, name := range settingNames {
		var v string
		if err := br.QueryRow().Scan(&v); err != nil {
			br.Close()
			return s, fmt.Errorf("postgres: reading setting %s: %w", name, err)
		}
		s.Values[name] = v
	}
	if err := br.Close(); err != nil {
		return s, fmt.Errorf("postgres: reading settings: %w", err)
	}
	return s, nil
}

var _ driver.PoolReporter = (*store)(nil)

// PoolStats implements driver.PoolReporter: the critical pool, then the
// general one.
func (d *store) PoolStats() []driver.PoolStat {
	var out []driver.PoolStat
	for _, p := range []struct {
		name string
		pool *pgxpool.Pool
	}{{"critical", d.critical}, {"general", d.general}} {
		s := p.pool.Stat()
		out = append(out, driver.PoolStat{Name: p.name, Max: s.MaxConns(), Open: s.TotalConns(), Idle: s.IdleConns(),
			InUse: s.AcquiredConns(), Acquires: s.AcquireCount(), Waited: s.EmptyAcquireCount(),
			Cancelled: s.CanceledAcquireCount(), AcquireWaitTotal: s.AcquireDuration()})
	}
	return out
}
