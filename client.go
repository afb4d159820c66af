package leasehold

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/internal/startstop"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
)

// Entry is one position of a world's journal.
type Entry = journal.Entry

// World is a world's head: the lease in force and the journal's tip.
type World = driver.World

// AuditReport is what an audit proved: for every position, the epoch and
// holder that held the write lease, and the first violation if any.
type AuditReport = journal.Report

// Client is a handle on a store of record. It is safe for concurrent use.
type Client struct {
	cfg      Config
	d        driver.Driver
	appender *world.Appender
	sweeper  *world.Sweeper

	events     *scheduler.EventCommitter
	eventsOnce sync.Once
	reclaimer  *scheduler.Reclaimer
	cleaner    *scheduler.Cleaner
	periodic   *scheduler.PeriodicService
}

// Driver is a store of record: what sqlite.Open (package
// github.com/leasehold/leasehold/driver/sqlite, the embedded default) or
// postgres.Open (package …/driver/postgres) returns. The user picks the
// driver and passes it in, so a program links only the one it uses: a
// SQLite-only binary carries no pgx. The interface is the drivers' contract
// with the library, not a stable API for callers.
type Driver = driver.Driver

// NewClient returns a client over d, validating cfg and, unless
// cfg.SkipMigrate, applying pending migrations. The client owns d from
// here on: Close closes it, also when NewClient fails.
//
//	d, err := sqlite.Open(ctx, sqlite.Config{Path: "leasehold.db"})
//	c, err := leasehold.NewClient(ctx, d, leasehold.Config{})
func NewClient(ctx context.Context, d Driver, cfg Config) (*Client, error) {
	if d == nil {
		return nil, fmt.Errorf("leasehold: NewClient needs a driver (sqlite.Open or postgres.Open): %w", ErrInvalid)
	}
	if err := cfg.Validate(); err != nil {
		d.Close()
		return nil, err
	}
	cfg = cfg.withDefaults()
	if cfg.CleanerBatch == 0 && d.Name() == "sqlite" {
		// A batch holds SQLite's one writer: smaller batches keep a
		// claim queued behind one short (docs/design/job-system.md).
		cfg.CleanerBatch = DefaultSQLiteCleanerBatch
	}
	c := &Client{cfg: cfg, d: d, appender: world.NewAppender(d, world.AppenderConfig{}),
		sweeper:   world.NewSweeper(d, cfg.Clock, cfg.WorldTiming, cfg.Logger),
		events:    scheduler.NewEventCommitter(d, scheduler.EventCommitterConfig{Logger: cfg.Logger}),
		reclaimer: scheduler.NewReclaimer(d, scheduler.ReclaimerConfig{Clock: cfg.Clock, Logger: cfg.Logger}),
		cleaner: scheduler.NewCleaner(d, scheduler.CleanerConfig{Retention: cfg.retention(), Interval: cfg.CleanerInterval,
			Batch: cfg.CleanerBatch, Clock: cfg.Clock, Logger: cfg.Logger})}
	var err error
	if c.periodic, err = c.newPeriodic(); err != nil {
		d.Close()
		return nil, err
	}
	if !cfg.SkipMigrate {
		if _, err := d.Migrate(ctx); err != nil {
			d.Close()
			return nil, err
		}
	} else if err := d.SchemaCheck(ctx); err != nil {
		// Refused here, typed (ErrNotMigrated, ErrSchemaTooNew), rather
		// than as a raw "no such table" / SQLSTATE 42P01 from the first
		// call.
		d.Close()
		return nil, err
	}
	return c, nil
}

// Close stops the sweeper and the reclaimer, flushes buffered events, waits
// for in-flight appends and closes the store. Stop workers first.
//
// Close returns within Config.CloseTimeout (default 5s) plus at most 1s
// for the store's own close, even while the store is unreachable: the last event flush and
// the queued appends are retried until then, and what is still unwritten
// is failed back to its callers with an error matching ErrClosed (an
// event's run sees it from Step), never dropped behind an acknowledgement.
// Every event a Step acknowledged is durable. When the deadline cut the
// shutdown short, Close returns an error wrapping context.DeadlineExceeded.
func (c *Client) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.CloseTimeout)
	defer cancel()
	return c.shutdown(ctx)
}

// shutdown stops every service of the client through its one lifecycle,
// all within ctx, then closes the store.
func (c *Client) shutdown(ctx context.Context) error {
	var errs []error
	for _, s := range c.services() {
		if err := s.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, c.closeDriver())
	return errors.Join(errs...)
}

// driverCloseGrace bounds the wait for the driver's Close. pgx closes a
// connection whose query was cancelled asynchronously and its pool's Close
// waits up to 15s for that cleanup, which on a dead network never comes
// sooner; past the grace the pool finishes closing in the background.
const driverCloseGrace = time.Second

// closeDriver closes the store, waiting at most driverCloseGrace.
func (c *Client) closeDriver() error {
	done := make(chan error, 1)
	go func() { done <- c.d.Close() }()
	t := time.NewTimer(driverCloseGrace) // real time: Close's bound is on the wall, whatever Config.Clock is
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		c.cfg.Logger.Warn("store still closing its connections; finishing in the background", "after", driverCloseGrace)
		return nil
	}
}

// services lists the client's background services in stop order: the
// loops that write first, then the batchers that take writes.
func (c *Client) services() []startstop.Service {
	return []startstop.Service{c.periodic, c.sweeper, c.reclaimer, c.cleaner, c.events, c.appender}
}

// Driver returns the underlying driver. Its interface is not a stable API.
func (c *Client) Driver() driver.Driver { return c.d }

// Migrate applies pending migrations.
func (c *Client) Migrate(ctx context.Context) (driver.MigrateResult, error) { return c.d.Migrate(ctx) }

// Settings reports the store's durability settings.
func (c *Client) Settings(ctx context.Context) (driver.Settings, error) { return c.d.Settings(ctx) }

// CreateWorld creates a world whose first entry grants epoch 1 to home, for
// the world lease term. ErrConflict if it exists.
func (c *Client) CreateWorld(ctx context.Context, id, home string) (*World, error) {
	return c.d.WorldCreate(ctx, &driver.WorldCreateParams{World: id, Home: home, Term: c.cfg.WorldTiming.Lease})
}

// World returns a world's head. ErrNotFound if it does not exist.
func (c *Client) World(ctx context.Context, id string) (*World, error) {
	return c.d.WorldGet(ctx, &driver.WorldGetParams{World: id})
}

// Worlds lists worlds ordered by id after the given id.
func (c *Client) Worlds(ctx context.Context, after string, limit int) ([]*World, error) {
	return c.d.WorldList(ctx, &driver.WorldListParams{After: after, Limit: limit})
}

func (c *Client) change(ctx context.Context, id, op string, plan func(s journal.State, now time.Time) (journal.Plan, error)) (*World, error) {
	w, err := c.d.LeaseChange(ctx, &driver.LeaseChangeParams{World: id, Op: op,
		Plan: func(w *driver.World, now time.Time) (journal.Plan, error) { return plan(w.State, now) }})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, id, err)
	}
	return w, nil
}

// Grant grants the next epoch to holder. epoch is the epoch the caller
// believes current; the grant is refused (ErrLeaseHeld) while anyone holds
// the lease — revoke first.
func (c *Client) Grant(ctx context.Context, id, holder string, epoch int64) (*World, error) {
	return c.change(ctx, id, "grant", func(s journal.State, now time.Time) (journal.Plan, error) {
		return journal.PlanGrant(s, now, holder, epoch, c.cfg.WorldTiming.Lease)
	})
}

// Renew extends the holder's live lease to the store's now + the term.
// An expired lease is never revived (ErrLeaseExpired).
func (c *Client) Renew(ctx context.Context, id, holder string, epoch int64) (*World, error) {
	return c.change(ctx, id, "renew", func(s journal.State, now time.Time) (journal.Plan, error) {
		return journal.PlanRenew(s, now, holder, epoch, c.cfg.WorldTiming.Lease)
	})
}

// Revoke ends the current epoch (an operator action through the store's
// grant path). Nobody holds the lease until the next Grant.
func (c *Client) Revoke(ctx context.Context, id string, epoch int64, reason string) (*World, error) {
	return c.change(ctx, id, "revoke", func(s journal.State, now time.Time) (journal.Plan, error) {
		return journal.PlanRevoke(s, now, epoch, reason)
	})
}

// Handoff is the holder's last act: it appends lease.handed_off, starting
// epoch+1 for to. The new holder must replay through the returned
// GrantedAt before its first append.
func (c *Client) Handoff(ctx context.Context, id, from, to string, epoch int64) (*World, error) {
	return c.change(ctx, id, "handoff", func(s journal.State, now time.Time) (journal.Plan, error) {
		return journal.PlanHandoff(s, now, from, to, epoch, c.cfg.WorldTiming.Lease)
	})
}

// SweepExpired revokes every expired lease and grants each world's home the
// next epoch; it returns how many worlds it swept.
func (c *Client) SweepExpired(ctx context.Context) (int, error) { return c.sweeper.SweepOnce(ctx) }

// StartSweeper runs the expiry sweep every P until Close. It is idempotent
// and fails with ErrClosed after Close.
func (c *Client) StartSweeper(ctx context.Context) error { return c.sweeper.Start(ctx) }

// AppendParams is one data entry to append.
type AppendParams struct {
	World        string
	Holder       string
	Epoch        int64
	SeenPosition int64 // the last position the holder has replayed
	Kind         string
	Key          string // optional idempotency key: a key already appended to the world (in any epoch) answers its first position and writes nothing
	Payload      []byte // JSON, at most journal.MaxPayloadBytes compact
}

// Append appends a data entry under the append rule and returns its
// position once durable. Concurrent appends to a world share one commit.
func (c *Client) Append(ctx context.Context, p AppendParams) (int64, error) {
	return c.appender.Append(ctx, p.World, journal.AppendRequest{Holder: p.Holder, Epoch: p.Epoch,
		SeenPosition: p.SeenPosition, Kind: journal.Kind(p.Kind), Key: p.Key, Payload: p.Payload})
}

// AppendStats returns group-commit batches and the appends they carried.
func (c *Client) AppendStats() (batches, appends int64) { return c.appender.Stats() }

// Read returns up to limit entries of a world from position from.
func (c *Client) Read(ctx context.Context, id string, from int64, limit int) ([]Entry, error) {
	return c.d.JournalRead(ctx, &driver.JournalReadParams{World: id, From: from, Limit: limit})
}

// Replay calls fn for every entry of a world from position from, in order.
func (c *Client) Replay(ctx context.Context, id string, from int64, fn func(*Entry) error) error {
	for {
		es, err := c.Read(ctx, id, from, 1000)
		if err != nil {
			return err
		}
		for i := range es {
			if err := fn(&es[i]); err != nil {
				return err
			}
		}
		if len(es) < 1000 {
			return nil
		}
		from = es[len(es)-1].Position + 1
	}
}
