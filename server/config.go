package server

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"math"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/lease"
)

// Config configures a Server. The zero value is valid.
type Config struct {
	// Timing is the run lease timing remote runners hold leases under.
	// Zero fields take lease.RunDefaults() (T_lease 90s, S 15s …).
	Timing lease.Timing
	// MaxBodyBytes caps one request body; a larger one is refused unread
	// with the too-large problem (413). Defaults to 4 MiB: a batch of
	// runs whose payloads are each up to 64 KiB compact.
	MaxBodyBytes int64
	// MaxClaimWait bounds a claim's long poll (wait_ms). Defaults to 30s.
	MaxClaimWait time.Duration
	// ClaimPoll is how often a long-polling claim looks again when nothing
	// woke it (runs enqueued by another process, a scheduled time
	// passing). Enqueues through this server wake it at once. Defaults to
	// 250ms.
	ClaimPoll time.Duration
	// RemoteMode is the heartbeat mode remote runners' renewals are made
	// in (remote_mode.go): writebehind (the zero value: one drain per
	// T_drain for all of them), dark or sync. Switch it at runtime
	// through /v1/admin/mode, as the worker "remote-holders".
	RemoteMode leasehold.HeartbeatMode
	// StreamPoll is how often an event or journal stream reads again when
	// nothing woke it: the fallback for lost notifications and for writes
	// no notification reaches (another process on SQLite). Writes through
	// this server's client, and any on Postgres (LISTEN/NOTIFY), wake a
	// stream at once. Defaults to 100ms.
	StreamPoll time.Duration
	// Clock measures runway (send times of claims and renewals) and drives
	// the long poll. Defaults to the real clock, whose Now is monotonic.
	Clock clock.Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger

	// TokenCacheTTL is how long a bearer token read from the store is
	// trusted before it is read again: a token revoked elsewhere (the CLI,
	// another server) is refused within it; one revoked through this
	// server, at once. Defaults to 5s.
	TokenCacheTTL time.Duration
	// StatsCacheTTL is how long GET /v1/stats/runs answers the run counts
	// it last read (one grouped scan of the runs table) before reading
	// them again; concurrent readers share one scan. Negative: read each
	// time. Defaults to 2s.
	StatsCacheTTL time.Duration
	// RateLimit is each token's sustained request rate per second, and
	// RateBurst the requests it may make at once; over it a request is
	// refused with the rate-limited problem (429, Retry-After). Zero: no
	// limit. RateBurst defaults to RateLimit rounded up (at least 1).
	RateLimit float64
	RateBurst int

	// Host, when set, is the world host commands are submitted to
	// (POST /v1/worlds/{world}/commands); Serve stops it — its world
	// loops and its keeper drained — before it closes the client. Nil:
	// the endpoint answers unavailable.
	Host *host.Host
	// TracerProvider, when set, traces every API call (a server span per
	// request, named by its route) and the store writes it makes (child
	// spans named "store RunClaim" …, with their durability class). Nil:
	// no tracing, no cost.
	TracerProvider trace.TracerProvider
	// TLS, when set, makes Serve speak HTTPS on its listener (LoadTLS
	// reads --tls-cert/--tls-key).
	TLS *tls.Config
}

// The defaults.
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultMaxClaimWait = 30 * time.Second
	DefaultClaimPoll    = 250 * time.Millisecond
	DefaultTokenTTL     = 5 * time.Second
	DefaultStreamPoll   = 100 * time.Millisecond
	DefaultStatsTTL     = 2 * time.Second
)

func (c Config) withDefaults() Config {
	c.Timing = c.Timing.WithDefaults(lease.RunDefaults())
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxClaimWait <= 0 {
		c.MaxClaimWait = DefaultMaxClaimWait
	}
	if c.ClaimPoll <= 0 {
		c.ClaimPoll = DefaultClaimPoll
	}
	if c.TokenCacheTTL <= 0 {
		c.TokenCacheTTL = DefaultTokenTTL
	}
	if c.RateLimit > 0 && c.RateBurst <= 0 {
		c.RateBurst = max(1, int(math.Ceil(c.RateLimit)))
	}
	if c.StatsCacheTTL == 0 {
		c.StatsCacheTTL = DefaultStatsTTL
	}
	if c.StreamPoll <= 0 {
		c.StreamPoll = DefaultStreamPoll
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports a configuration New would refuse, naming the values.
func (c Config) Validate() error {
	c = c.withDefaults()
	if err := c.Timing.Validate(); err != nil {
		return fmt.Errorf("server: run timing: %w", err)
	}
	if c.RateLimit < 0 || math.IsNaN(c.RateLimit) || math.IsInf(c.RateLimit, 0) {
		return fmt.Errorf("server: rate limit %v: want a finite rate >= 0 (0: none): %w", c.RateLimit, leasehold.ErrInvalid)
	}
	if _, err := leasehold.ParseHeartbeatMode(c.RemoteMode.String()); err != nil {
		return fmt.Errorf("server: remote mode: %w", err)
	}
	return nil
}
