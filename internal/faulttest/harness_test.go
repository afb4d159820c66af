package faulttest

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/internal/pgcluster"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// scale divides every timing of a scenario: the run defaults, the pool's
// acquire (2s) and statement (10s) timeouts, and the faults.
const scale = 30

func scaled(d time.Duration) time.Duration { return d / scale }

// timing is lease.RunDefaults() / scale: T_lease 3s, T_renew 500ms,
// T_drain ≈167ms, D_stop 1.5s, S 500ms, P ≈33ms, margin ≈167ms.
var timing = func() lease.Timing {
	d := lease.RunDefaults()
	return lease.Timing{Lease: scaled(d.Lease), Renew: scaled(d.Renew), Drain: scaled(d.Drain), Stop: scaled(d.Stop),
		Skew: scaled(d.Skew), Poll: scaled(d.Poll), Margin: scaled(d.Margin)}
}()

// acquireTimeout is the workers' pool acquire timeout: the default (2s)
// divided by 10, not by scale. A thirtieth (67ms) is shorter than the
// scheduling delays of a machine whose two cores run the whole suite, and
// a starved acquire there fails renewals of healthy workers — the fault
// the scenarios inject, arriving uninvited. 200ms keeps the production
// order (acquire shorter than the statement timeout, ≈333ms here, so a
// starved write fails fast and is retried) and stays within a drain.
var acquireTimeout = postgres.DefaultAcquireTimeout / 10

// statementTimeout is the workers' statement timeout, the default (10s)
// divided by 10 for the same reason: a renewal UPDATE on a Postgres the
// whole suite loads can take longer than a thirtieth (333ms), and every
// such drain failing would stop a healthy worker. It bounds nothing the
// scenarios measure: a blackholed statement is cut by the caller's
// deadline, and a paused worker holds no transaction (it pauses in an
// effect).
var statementTimeout = postgres.DefaultStatementTimeout / 10

// strandBound is the recovery bound of SPEC §1: a dead holder's run is
// reclaimed within T_lease + P + S of its last confirmed renewal.
var strandBound = timing.Lease + timing.Poll + timing.Skew

const (
	// effectMax is each effect's declared maximum duration. The gate
	// needs min(runway, D_stop - lag) >= effectMax + margin, and normal
	// upkeep leaves D_stop - lag of about 1.5s - (T_renew + T_drain) ≈
	// 830ms, so 400ms passes on a healthy link and fails under a stall.
	effectMax = 400 * time.Millisecond
	// concurrency is each worker's slots on the queue.
	concurrency = 3
	// workerLife bounds a worker process the parent never stops.
	workerLife = 3 * time.Minute
	// patience bounds every wait on the system: generous, so a loaded
	// machine makes a scenario slower, not red.
	patience = 60 * time.Second
)

// database is where a scenario's store lives.
type database struct {
	url    string // direct
	schema string
	addr   string // host:port, the proxies' target
}

// sharedDatabase is a fresh schema on the shared test server (it skips
// loudly, or fails under CI=true, when the server does not answer).
func sharedDatabase(t *testing.T) database {
	t.Helper()
	dsn, schema := testdb.Schema(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "5432")
	}
	return database{url: dsn, schema: schema, addr: addr}
}

// clusterDatabase is the public schema of a throwaway cluster.
func clusterDatabase(c *pgcluster.Cluster) database {
	return database{url: c.URL(), addr: c.Addr()}
}

// scenarioConfig sizes a scenario's work.
type scenarioConfig struct {
	Runs       int
	Effects    int           // per run
	EffectWork time.Duration // per effect, after the witness call
}

// scenario is the parent's side of one fault scenario.
type scenario struct {
	t        *testing.T
	cfg      scenarioConfig
	db       database
	store    *postgres.Driver // direct: the reclaimer's and the checks'
	obs      *observer
	srv      *httptest.Server
	reclaims *reclaimLog
	canary   *canary
	ids      []int64
	workers  []*workerProc
}

// newScenario migrates the store, enqueues the runs and starts the
// observer and the reclaimer. Workers are started by the test.
func newScenario(t *testing.T, db database, cfg scenarioConfig) *scenario {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	var store *postgres.Driver
	// Set-up is not under test; on a loaded machine a first connection
	// can miss the acquire timeout, so it is retried (bounded).
	err := retry(ctx, func() (err error) {
		store, err = postgres.Open(ctx, postgres.Config{URL: db.url, Schema: db.schema, Logger: quiet,
			CriticalConns: 2, GeneralConns: 2})
		return err
	})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	require.NoError(t, retry(ctx, func() error {
		_, err := store.Migrate(ctx)
		return err
	}))
	s := &scenario{t: t, cfg: cfg, db: db, store: store, canary: startCanary(t)}
	s.obs, s.srv = newObserver(t)

	es := make([]runs.Enqueue, cfg.Runs)
	for i := range es {
		es[i] = runs.Enqueue{Queue: queue, Payload: fmt.Appendf(nil, `{"n":%d}`, i)}
	}
	enq, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
	require.NoError(t, err)
	for _, e := range enq {
		s.ids = append(s.ids, e.Run.ID)
	}

	// The reclaimer runs from the start on its own direct connection, as
	// on every replica.
	s.reclaims = &reclaimLog{RunStore: store}
	rec := scheduler.NewReclaimer(s.reclaims, scheduler.ReclaimerConfig{Timing: timing, Logger: quiet})
	require.NoError(t, rec.Start(context.Background()))
	t.Cleanup(func() { _ = rec.Stop(context.Background()) })
	return s
}

// awaitStarted waits until every worker process runs its worker.
func (s *scenario) awaitStarted() {
	s.t.Helper()
	for _, p := range s.workers {
		require.Eventually(s.t, func() bool {
			_, ok := s.obs.signal(sigStarted, p.owner)
			return ok || p.exited()
		}, patience, 10*time.Millisecond, "worker %s did not start", p.owner)
		require.False(s.t, p.exited(), "worker %s exited at start: %v\n%s", p.owner, p.err, p.out.String())
	}
}

// awaitAcks waits until owner's Steps acknowledged n events (any
// worker's with owner "").
func (s *scenario) awaitAcks(owner string, n int) {
	s.t.Helper()
	require.Eventually(s.t, func() bool { return s.obs.ackCount(owner) >= n }, patience, 5*time.Millisecond,
		"%q: fewer than %d events acknowledged", owner, n)
}

// awaitFinal waits until every run is final (completed, failed or
// cancelled).
func (s *scenario) awaitFinal() {
	s.t.Helper()
	var pending int
	require.Eventually(s.t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pending = 0
		for _, id := range s.ids {
			r, err := s.store.RunGet(ctx, &driver.RunGetParams{ID: id})
			if err != nil || !r.State.Final() {
				pending++
			}
		}
		return pending == 0
	}, 2*patience, 100*time.Millisecond, "runs still not final")
}

// heldBy returns the runs owner holds now, with their fences.
func (s *scenario) heldBy(owner string) map[int64]int64 {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	held := map[int64]int64{}
	for _, id := range s.ids {
		r, err := s.store.RunGet(ctx, &driver.RunGetParams{ID: id})
		require.NoError(s.t, err)
		if r.State == runs.StateRunning && r.Owner == owner {
			held[id] = r.Fence
		}
	}
	return held
}

// awaitReclaimed waits until the reclaimer took back every lease of held
// (run → fence) from owner.
func (s *scenario) awaitReclaimed(owner string, held map[int64]int64) {
	s.t.Helper()
	require.Eventually(s.t, func() bool {
		n := 0
		for _, rc := range s.reclaims.of(owner) {
			if f, ok := held[rc.Run.ID]; ok && f == rc.Fence {
				n++
			}
		}
		return n == len(held)
	}, patience, 10*time.Millisecond, "%s's leases %v were not all reclaimed", owner, held)
}

// awaitCompleted waits until every run of ids is completed.
func (s *scenario) awaitCompleted(ids map[int64]int64) {
	s.t.Helper()
	require.Eventually(s.t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for id := range ids {
			r, err := s.store.RunGet(ctx, &driver.RunGetParams{ID: id})
			if err != nil || r.State != runs.StateCompleted {
				return false
			}
		}
		return true
	}, patience, 20*time.Millisecond, "runs %v were not all completed", ids)
}

// awaitSignal waits for the first signal name from owner.
func (s *scenario) awaitSignal(name, owner string) signalReport {
	s.t.Helper()
	var sig signalReport
	require.Eventually(s.t, func() bool {
		var ok bool
		sig, ok = s.obs.signal(name, owner)
		return ok
	}, patience, 2*time.Millisecond, "no %s signal from %s", name, owner)
	return sig
}
