package drivertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// Harness is one fresh, migrated store for one test case.
type Harness struct {
	Driver driver.Driver
	// Clock is the store clock the driver was opened with, so cases can
	// move store time (expiry) without sleeping.
	Clock *clock.Fake
	// Exec runs raw SQL in the driver's schema, for cases that must reach
	// under the driver (a schema written by a newer binary).
	Exec func(ctx context.Context, sql string) error
	// Query runs a one-row query in the driver's schema and scans it.
	Query func(ctx context.Context, sql string, dest ...any) error
	// OpenEmpty, when set, makes another store, fresh and not migrated
	// (a new file, a new schema), and returns how to open a driver on it
	// — as many times as a case needs, each caller closing its own.
	OpenEmpty func(t *testing.T) func(ctx context.Context) (driver.Driver, error)
	// BeginTx opens a caller's transaction on the store, of the kind
	// RunEnqueueTx takes (a pgx.Tx on Postgres, a *sql.Tx on SQLite).
	BeginTx func(ctx context.Context) (*CallerTx, error)
}

// CallerTx is a caller's own transaction, as the enqueue-in-transaction
// cases drive it: the driver-native Tx, and the caller's own statements.
type CallerTx struct {
	Tx       any
	Exec     func(ctx context.Context, sql string) error // one of the caller's own writes, in Tx
	Commit   func(ctx context.Context) error
	Rollback func(ctx context.Context) error
}

// Factory opens a fresh store (new SQLite file or new Postgres schema),
// migrated, with a fake store clock.
type Factory func(t *testing.T) *Harness

// Case is one conformance case.
type Case struct {
	Name string
	Run  func(t *testing.T, f Factory)
}

// Exercise runs every case as a subtest and returns how many ran.
func Exercise(t *testing.T, f Factory) int {
	cases := Cases()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			c.Run(t, f)
		})
	}
	t.Logf("conformance: %d cases", len(cases))
	return len(cases)
}

// StartTime is where every harness's fake store clock starts.
var StartTime = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

const term = 30 * time.Second

// env bundles what a case uses.
type env struct {
	t   *testing.T
	h   *Harness
	d   driver.Driver
	ctx context.Context
	// fpQuery is the store fingerprint's query (hostile_fingerprint.go),
	// built from the catalogue on first use.
	fpQuery string
}

func newEnv(t *testing.T, f Factory) *env {
	h := f(t)
	return &env{t: t, h: h, d: h.Driver, ctx: context.Background()}
}

func (e *env) create(world, home string) *driver.World {
	w, err := e.d.WorldCreate(e.ctx, &driver.WorldCreateParams{World: world, Home: home, Term: term})
	require.NoError(e.t, err)
	return w
}

func (e *env) get(world string) *driver.World {
	w, err := e.d.WorldGet(e.ctx, &driver.WorldGetParams{World: world})
	require.NoError(e.t, err)
	return w
}

func (e *env) read(world string) []journal.Entry {
	var all []journal.Entry
	for from := int64(1); ; {
		es, err := e.d.JournalRead(e.ctx, &driver.JournalReadParams{World: world, From: from, Limit: 500})
		require.NoError(e.t, err)
		all = append(all, es...)
		if len(es) < 500 {
			return all
		}
		from = es[len(es)-1].Position + 1
	}
}

// audit checks the stored journal verifies and that the head row agrees
// with the fold of the journal.
func (e *env) audit(world string) journal.Report {
	e.t.Helper()
	rep := journal.Audit(e.read(world))
	require.True(e.t, rep.OK(), "audit of %s: %v", world, rep.Violation)
	head := e.get(world)
	require.True(e.t, head.State.Equal(rep.Final), "head %s\nfold %s", head.State, rep.Final)
	return rep
}

func (e *env) append1(world, holder string, epoch, seen int64, kind string, payload string) (int64, error) {
	e.t.Helper()
	req := journal.AppendRequest{Holder: holder, Epoch: epoch, SeenPosition: seen, Kind: journal.Kind(kind), Payload: []byte(payload)}
	if err := journal.ValidateAppend(&req); err != nil {
		return 0, err
	}
	out, err := e.d.JournalAppend(e.ctx, &driver.JournalAppendParams{World: world, Requests: []journal.AppendRequest{req}})
	if err != nil {
		return 0, err
	}
	require.Len(e.t, out, 1)
	return out[0].Position, out[0].Err
}

func (e *env) handoff(world, from, to string, epoch int64) *driver.World {
	e.t.Helper()
	w, err := e.d.LeaseChange(e.ctx, &driver.LeaseChangeParams{World: world, Op: "handoff",
		Plan: func(w *driver.World, now time.Time) (journal.Plan, error) {
			return journal.PlanHandoff(w.State, now, from, to, epoch, term)
		}})
	require.NoError(e.t, err)
	return w
}

func (e *env) change(world, op string, plan func(s journal.State, now time.Time) (journal.Plan, error)) (*driver.World, error) {
	return e.d.LeaseChange(e.ctx, &driver.LeaseChangeParams{World: world, Op: op,
		Plan: func(w *driver.World, now time.Time) (journal.Plan, error) { return plan(w.State, now) }})
}

func countKind(es []journal.Entry, k journal.Kind) int {
	n := 0
	for _, e := range es {
		if e.Kind == k {
			n++
		}
	}
	return n
}
