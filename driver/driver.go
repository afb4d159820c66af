package driver

import (
	"context"
	"time"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// Shared sentinels, re-exported from package lease so every layer matches
// the same values with errors.Is.
var (
	ErrNotFound     = lease.ErrNotFound
	ErrConflict     = lease.ErrConflict
	ErrInvalid      = lease.ErrInvalid
	ErrFenced       = lease.ErrFenced
	ErrNotHolder    = lease.ErrNotHolder
	ErrLeaseExpired = lease.ErrLeaseExpired
	ErrSeenBehind   = lease.ErrSeenBehind
	ErrLeaseHeld    = lease.ErrLeaseHeld
	ErrSchemaTooNew = lease.ErrSchemaTooNew
	ErrNotMigrated  = lease.ErrNotMigrated
	ErrCorrupt      = lease.ErrCorrupt
)

// Driver is a store of record. Implementations are safe for concurrent use.
// Its run half is RunStore (runs.go), RunLister (runs_list.go) and
// EffectStore (effects.go).
type Driver interface {
	RunStore
	RunLister   // runs_list.go
	RunRetainer // runs_retention.go
	RunReleaser // runs_release.go
	QueueStore  // queues.go
	EffectStore
	HomeStore     // home.go
	NodeKeyStore  // nodekeys.go
	WorldRenewer  // worldrenew.go
	TokenStore    // tokens.go
	SnapshotStore // snapshots.go

	// Name is "sqlite" or "postgres".
	Name() string
	// Settings reads the durability settings the store is running with, as
	// the store reports them (not as configured).
	Settings(ctx context.Context) (Settings, error)
	// Migrate applies the embedded migrations not yet applied, in order,
	// all in one transaction. It is idempotent and safe to run from
	// several processes at once. It refuses, with ErrSchemaTooNew, a schema
	// that a newer binary migrated.
	Migrate(ctx context.Context) (MigrateResult, error)
	// SchemaCheck writes nothing and says whether the schema is current:
	// nil if every embedded migration is applied, ErrNotMigrated if the
	// store was never migrated or some are pending, ErrSchemaTooNew if a
	// newer binary migrated it. A client that skips Migrate calls it at
	// open, so a call never fails on a missing table instead.
	SchemaCheck(ctx context.Context) error
	// StoreNow reads the store's clock: the one clock every lease expiry is
	// computed and compared on.
	StoreNow(ctx context.Context) (time.Time, error)
	// Close releases the driver's connections.
	Close() error

	// WorldCreate creates a world whose first entry grants epoch 1 to its
	// home. ErrConflict if the world exists.
	WorldCreate(ctx context.Context, p *WorldCreateParams) (*World, error)
	// WorldGet returns a world's head. ErrNotFound if it does not exist.
	WorldGet(ctx context.Context, p *WorldGetParams) (*World, error)
	// WorldList lists worlds ordered by id, after p.After, at most p.Limit;
	// with p.Home set, only the worlds whose Home is p.Home.
	WorldList(ctx context.Context, p *WorldListParams) ([]*World, error)
	// LeaseChange commits one lease change (grant, renew, revoke, handoff)
	// planned by p.Plan against the locked head and the store's clock.
	// A planner error is returned as is and nothing is written. p.Plan
	// must have no side effects: a driver may call it more than once in
	// one change (SQLite plans first from the head it remembers, and
	// again from the stored head when the conditional write finds the
	// row changed); only the plan that is written counts.
	LeaseChange(ctx context.Context, p *LeaseChangeParams) (*World, error)
	// LeaseScanExpired lists up to p.Limit worlds whose lease is held and
	// expired on the store clock, ordered by (expiry, id), after the cursor
	// p.After when it is set. It is a hint read without locks: the expiry
	// sweep (world.SweepExpired) then sweeps each world through
	// LeaseChange, whose planner re-checks expiry on the locked head and
	// whose conditional write re-asserts it, so two sweepers never both
	// grant.
	LeaseScanExpired(ctx context.Context, p *LeaseScanParams) ([]ExpiredWorld, error)
	// JournalAppend appends a batch of data entries to one world in one
	// transaction (one fsync), in order, under the append rule. Each request
	// gets an outcome; refusals for epoch, holder or expiry are journaled as
	// append.rejected at most once per holder per epoch. An entry is durable
	// when this returns without error.
	JournalAppend(ctx context.Context, p *JournalAppendParams) ([]journal.AppendOutcome, error)
	// JournalRead returns entries of one world with position >= p.From, in
	// order, at most p.Limit. The range is inclusive of From. ErrNotFound if
	// the world does not exist.
	JournalRead(ctx context.Context, p *JournalReadParams) ([]journal.Entry, error)
	// JournalImport creates a world from a verified journal (see
	// journal.Auditor), in one transaction. ErrConflict if it exists.
	JournalImport(ctx context.Context, p *JournalImportParams) (*World, error)
}

// World is a world's materialized head row. Its State agrees with the fold
// of its journal at every position.
type World struct {
	journal.State
	Home        string        // the home pool: the sweep grants a live replica of it, else this name (HomeGrantee)
	DefaultTerm time.Duration // the term of grants made by the sweep
	CreatedAt   time.Time
}

// Settings are the durability settings a store runs with.
type Settings struct {
	Driver string
	// Values maps a setting to the store's own report of it, e.g.
	// "journal_mode": "wal", "synchronous": "2 (FULL)" for SQLite or
	// "synchronous_commit": "on", "fsync": "on" for Postgres.
	Values map[string]string
}

// MigrateResult reports what Migrate did.
type MigrateResult struct {
	Applied []int // versions applied by this call, in order
	Version int   // schema version after the call
}

// WorldCreateParams creates a world. Term is the term of the first grant and
// of every grant the expiry sweep makes to Home.
type WorldCreateParams struct {
	World string
	Home  string
	Term  time.Duration
	// Holder is granted the first epoch; empty: Home. A world homed on a
	// pool (HomeStore) is created held by the replica that creates it.
	Holder string
}

// FirstHolder is who a create grants epoch 1 to: Holder, else Home.
func (p *WorldCreateParams) FirstHolder() string {
	if p.Holder != "" {
		return p.Holder
	}
	return p.Home
}

// Class implements lease.Classed.
func (*WorldCreateParams) Class() lease.Durability { return lease.SyncCritical }

// WorldGetParams names a world.
type WorldGetParams struct{ World string }

// WorldListParams pages through worlds.
type WorldListParams struct {
	After string
	Limit int
	// Home, when set, lists only the worlds whose Home is exactly Home (a
	// node name or a home pool's): what a pool replica looks at.
	Home string
}

// Planner plans a lease change from the locked head at store time now.
type Planner func(w *World, now time.Time) (journal.Plan, error)

// LeaseChangeParams is one lease change of one world.
type LeaseChangeParams struct {
	World string
	Op    string // for errors and logs: "grant", "renew", "revoke", "handoff"
	Plan  Planner
}

// Class implements lease.Classed.
func (*LeaseChangeParams) Class() lease.Durability { return lease.SyncCritical }

// LeaseScanParams bounds one scan of expired leases.
type LeaseScanParams struct {
	Limit int           // at most this many worlds; <= 0 means 100
	After *ExpiredWorld // only worlds after this one in (expiry, id) order; nil: from the start
}

// ExpiredWorld is a world whose held lease the scan found expired.
type ExpiredWorld struct {
	World     string
	ExpiresAt time.Time // store clock
}

// JournalAppendParams is a batch of appends to one world. Each request is
// validated by the planner (journal.PlanAppend, on a copy); an invalid one is
// answered with its *journal.InputError and writes nothing.
type JournalAppendParams struct {
	World    string
	Requests []journal.AppendRequest
}

// Class implements lease.Classed: appends share one transaction.
func (*JournalAppendParams) Class() lease.Durability { return lease.DurableBatched }

// JournalReadParams reads a range of a journal.
type JournalReadParams struct {
	World string
	From  int64 // first position, >= 1
	Limit int   // <= 0 means 1000
}

// JournalImportParams imports a verified journal as a new world.
type JournalImportParams struct {
	Entries     []journal.Entry
	Home        string        // defaults to the holder of the first grant
	DefaultTerm time.Duration // defaults to the first grant's term
}

// Class implements lease.Classed.
func (*JournalImportParams) Class() lease.Durability { return lease.SyncCritical }

// PoolStat is one connection pool's health, as `leasehold doctor` prints it.
type PoolStat struct {
	Name             string
	Max, Open, Idle  int32 // configured size, connections open, open and idle
	InUse            int32
	Acquires         int64         // connections handed out since start
	Waited           int64         // acquires that found no idle connection
	Cancelled        int64         // acquires given up (timeout or caller)
	AcquireWaitTotal time.Duration // summed time spent acquiring
}

// PoolReporter is implemented by drivers with connection pools (Postgres:
// the reserved critical pool and the general pool).
type PoolReporter interface {
	PoolStats() []PoolStat
}
