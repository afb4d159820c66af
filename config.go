package leasehold

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// DefaultPath is the embedded SQLite store used when no DatabaseURL is given.
const DefaultPath = "leasehold.db"

// Config configures a Client. The zero value is valid: embedded SQLite at
// ./leasehold.db with the SPEC's world timing.
type Config struct {
	// DatabaseURL selects Postgres ("postgres://…" or "postgresql://…").
	// Empty means embedded SQLite at Path.
	DatabaseURL string
	// Path is the SQLite file when DatabaseURL is empty. Defaults to
	// DefaultPath.
	Path string
	// WorldTiming is the lease timing of worlds. Zero fields take
	// lease.WorldDefaults() (T_lease 30s, T_renew 5s, T_drain 1s, D_stop 15s,
	// S 5s, P 1s); the result is validated at Open.
	WorldTiming lease.Timing
	// Clock drives the sweeper's period and, for SQLite, is the store clock.
	// Defaults to the real clock.
	Clock clock.Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// SkipMigrate skips applying migrations at Open (the schema must then
	// be current; see Client.Migrate and `leasehold migrate`).
	SkipMigrate bool
	// Queues, when set, is the closed set of run queues: Enqueue and
	// NewWorker refuse any other queue with an *UnknownQueueError
	// (ErrUnknownQueue, ErrInvalid), so a typo cannot park runs where no
	// worker will ever look. Empty accepts every valid queue name.
	Queues []string
	// CloseTimeout bounds Client.Close: how long the last event flush and
	// the queued appends are retried before what is still unwritten is
	// failed back to its callers with ErrClosed. Defaults to 5s.
	CloseTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	c.WorldTiming = c.WorldTiming.WithDefaults(lease.WorldDefaults())
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.CloseTimeout <= 0 {
		c.CloseTimeout = DefaultCloseTimeout
	}
	return c
}

// DefaultCloseTimeout is Config.CloseTimeout's default.
const DefaultCloseTimeout = 5 * time.Second

// Validate reports a configuration Open would refuse, naming the values.
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.DatabaseURL != "" && !isPostgresURL(c.DatabaseURL) {
		return fmt.Errorf("leasehold: DatabaseURL %q is not a postgres:// or postgresql:// URL: %w", redact(c.DatabaseURL), ErrInvalid)
	}
	for _, q := range c.Queues {
		if err := runs.ValidateQueue(q); err != nil {
			return fmt.Errorf("leasehold: Queues: %w", err)
		}
	}
	if err := c.WorldTiming.Validate(); err != nil {
		return fmt.Errorf("leasehold: world timing: %w", err)
	}
	return nil
}

func isPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// redact drops a password from a URL for error messages.
//
// It keeps the scheme, host and path and drops the userinfo, which ends at
// the last "@" of the authority (as net/url and pgx read it, so an "@"
// inside a password cannot leak the rest of it). Anything that is not a
// URL (a key=value connection string may carry password=…) is not shown.
func redact(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "(not a URL; not shown, it may hold a password)"
	}
	authority, path := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		return scheme + "://…@" + authority[i+1:] + redactQuery(path)
	}
	return scheme + "://" + authority + redactQuery(path)
}

// redactQuery drops a query string, which may carry password=….
func redactQuery(path string) string {
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		return path[:i] + "?…"
	}
	return path
}
