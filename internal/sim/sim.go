package sim

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/internal/scheduler"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/runs"
)

// Options of one simulation.
type Options struct {
	// Dir holds the per-seed SQLite file. Defaults to DefaultDir().
	Dir string
	// Knobs, if set, replaces the seed's knobs (after drawing them, so
	// the seed's schedule stays its own).
	Knobs func(*Knobs)
	// Verbose keeps the whole trace, not only its last lines.
	Verbose bool
}

// Result is one seed's outcome.
type Result struct {
	Seed       uint64
	Knobs      Knobs
	Violations []Violation
	Trace      []string // the last lines before the first violation (or the end)
	Virtual    time.Duration
	Steps      int
	// Figures.
	Completed, Failed, Invocations, RefusedByWitness, Uncertain, Reclaims, Crashes, Partitions, Pauses, Events int
	// LateRenewals counts renewals that reached the store for a lease
	// already expired but not yet reclaimed (the store must refuse them).
	LateRenewals int
	// Worlds: acknowledged appends, expiry sweeps, journal length.
	Appends, Sweeps, JournalEntries int
	// Host mode: commands acknowledged (and acknowledged ones sent again),
	// handoffs the store applied, payouts the witness saw (and refused).
	Host bool
	// Reconciled counts the uncertain payouts (a holder lost the lease
	// between the intent and the turn) the hosts settled with the witness.
	// Signed counts the journal entries carrying a holder's signature.
	Commands, Resent, Handoffs, Payouts, PayoutsRefused, Reconciled, Signed int
	// SnapshotsPut and SnapshotsGot count the world snapshots the hosts
	// stored and the ones their empty mirrors found.
	SnapshotsPut, SnapshotsGot int
	// SnapshotsRestored and SnapshotsIgnored are the hosts' counts: the
	// snapshots their mirrors started from, and those found and not
	// trusted (the mirror replayed from position 1).
	SnapshotsRestored, SnapshotsIgnored int64
	// BandMoves counts the handoffs the hot-world band made (Knobs.Band),
	// each checked to follow its host.band entry (InvBand).
	BandMoves int
	MaxStrand time.Duration
	History   string
}

// OK reports whether no invariant was broken.
func (r *Result) OK() bool { return len(r.Violations) == 0 }

// Sim is one simulation.
type Sim struct {
	seed         uint64
	loop         *loop
	knobs        Knobs
	store        *sqlite.Driver
	storeClock   *simClock
	procs        []*proc
	oracle       *oracle
	witness      *witness
	history      *history
	worldHistory *history
	fetchEvery   time.Duration
	healthyRTT   time.Duration
	faultsEnd    time.Duration
	hs           *hostState
	crashes      int
	partitions   int
	pauses       int
}

func (s *Sim) faulty() bool { return s.loop.now < s.faultsEnd }

func (s *Sim) procByOwner(owner string) *proc {
	id, _, ok := strings.Cut(strings.TrimPrefix(owner, "w"), ".")
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(id)
	if err != nil || n < 0 || n >= len(s.procs) {
		return nil
	}
	return s.procs[n]
}

// DefaultDir is where seeds keep their SQLite files: a tmpfs (/dev/shm)
// when there is one, since the files' fsyncs then cost nothing; otherwise
// the system's temporary folder.
func DefaultDir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// Run simulates one seed.
func Run(ctx context.Context, seed uint64, opts Options) (*Result, error) {
	l := newLoop(seed)
	if opts.Verbose {
		l.trace = newRing(200000)
	}
	k := drawKnobs(l.rng)
	if seed%hostShare == 0 {
		k.Host, k.Commands, k.Submitters = true, 8+l.rng.IntN(25), 1+l.rng.IntN(2)
		k.Band = l.rng.IntN(2) == 0
	}
	if opts.Knobs != nil {
		opts.Knobs(&k)
	}
	s := &Sim{seed: seed, loop: l, knobs: k, history: &history{l: l, model: runModel}, worldHistory: &history{l: l, model: worldModel},
		witness:    &witness{highest: map[effectKey]int64{}, floor: map[effectKey]int64{}, calls: map[effectKey]int{}, last: map[effectKey]time.Duration{}},
		fetchEvery: max(k.Timing.Poll/2, 50*time.Millisecond), faultsEnd: k.FaultPhase}
	s.hs = &hostState{byKey: map[string]*simCmd{}, payouts: map[string]*payoutRec{}}
	s.oracle = &oracle{s: s, uncertain: map[effectKey]time.Duration{}, dead: map[string]map[int64]time.Time{}}
	// A round trip this slow or slower counts as a fault: upkeep may lag.
	s.healthyRTT = max((k.Timing.Stop-k.Timing.Renew-k.Timing.Drain)/4, 2*k.LatencyMax)
	s.storeClock = &simClock{l: l, drift: (l.rng.Float64()*2 - 1) * k.Drift, step: k.StoreStep,
		stepAt: time.Duration(l.rng.Int64N(int64(k.FaultPhase) + 1))}

	dir := opts.Dir
	if dir == "" {
		dir = DefaultDir()
	}
	tmp, err := os.MkdirTemp(dir, "leasehold-sim-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// One reader connection: which pooled connection serves a read must
	// not depend on the machine (database/sql opens and hands them out
	// from its own goroutines).
	store, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(tmp, "sim.db"), Clock: s.storeClock, Logger: slog.New(slog.DiscardHandler), ReadConns: 1})
	if err != nil {
		return nil, err
	}
	defer store.Close()
	if _, err := store.Migrate(ctx); err != nil {
		return nil, err
	}
	s.store = store
	es := make([]runs.Enqueue, k.Runs)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "q", MaxAttempts: maxAttempts}
	}
	if _, err := store.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es}); err != nil {
		return nil, err
	}
	if _, err := store.WorldCreate(ctx, &driver.WorldCreateParams{World: worldID, Home: nodeName(0), Term: k.Timing.Lease}); err != nil {
		return nil, err
	}

	for i := range k.Workers {
		p := &proc{s: s, id: i, clock: &simClock{l: l, offset: time.Duration(l.rng.Int64N(int64(time.Hour))) - 30*time.Minute,
			drift: (l.rng.Float64()*2 - 1) * k.Drift}}
		s.procs = append(s.procs, p)
		p.start()
	}
	s.startStoreSide()
	s.scheduleFaults()

	// Faults, then calm until every run is final or the calm phase ends.
	l.runUntil(k.FaultPhase, func() bool { return len(s.oracle.violations) > 0 })
	for _, p := range s.procs {
		p.partUntil = 0
		p.pausedUntil = min(p.pausedUntil, l.now)
		if !p.up {
			p.start()
		}
	}
	end := k.FaultPhase + k.CalmMax
	l.runUntil(end, func() bool { return len(s.oracle.violations) > 0 || s.hostDone() && s.allFinal() })
	if len(s.oracle.violations) == 0 {
		s.oracle.final()
		s.oracle.finalWorld()
		if s.history.check(10*time.Second) == porcupine.Illegal {
			s.history.logIllegal(runModel)
			s.oracle.fail(InvLinearized, "the run transitions observed (%d operations) are not linearizable against the fenced-run model", len(s.history.ops))
		}
		if s.worldHistory.check(10*time.Second) == porcupine.Illegal {
			for _, op := range s.worldHistory.ops {
				ret := "lost"
				if op.Return != math.MaxInt64 {
					ret = fmt.Sprintf("%.3f", time.Duration(op.Return).Seconds())
				}
				l.logf("journal op [%.3f, %s] client %d: %s", time.Duration(op.Call).Seconds(), ret, op.ClientId, worldModel.DescribeOperation(op.Input, op.Output))
			}
			s.oracle.fail(InvLinearized, "the journal operations observed (%d) are not linearizable against the append-rule model", len(s.worldHistory.ops))
		}
	}
	var all []*thread
	for _, p := range s.procs {
		all = append(all, p.threads...)
		s.hs.countHost(p.host)
	}
	all = append(all, l.storeSide...)
	l.killAll(all)
	if s.hs.snapsIgnored > 0 {
		s.oracle.fail(InvSnapshot, "the hosts' mirrors found %d snapshots they could not trust (a journal never changes, so every stored snapshot must verify)", s.hs.snapsIgnored)
	}

	r := &Result{Seed: seed, Knobs: k, Violations: s.oracle.violations, Trace: l.trace.all(), Virtual: l.now, Steps: l.steps,
		Invocations: s.oracle.invocations, RefusedByWitness: s.oracle.refusedByWitness, Uncertain: s.oracle.uncertainReports,
		Reclaims: s.oracle.reclaims, Crashes: s.crashes, Partitions: s.partitions, Pauses: s.pauses, LateRenewals: s.oracle.lateRenewals,
		Appends: len(s.oracle.ackedEntries), Sweeps: s.oracle.sweeps, JournalEntries: s.oracle.entries, Events: len(s.oracle.acked),
		Host: k.Host, Commands: s.hs.acked, Resent: s.hs.resent, Handoffs: s.hs.handoffs, Payouts: s.hs.invoked, PayoutsRefused: s.hs.refused, Reconciled: s.hs.asked, Signed: s.hs.signed,
		SnapshotsPut: s.hs.snapsPut, SnapshotsGot: s.hs.snapsGot, SnapshotsRestored: s.hs.snapsRestored, SnapshotsIgnored: s.hs.snapsIgnored,
		BandMoves: s.hs.bandMoves}
	for _, d := range s.oracle.strands {
		r.MaxStrand = max(r.MaxStrand, d)
	}
	for id := int64(1); id <= int64(k.Runs); id++ {
		switch s.oracle.row(id).State {
		case runs.StateCompleted:
			r.Completed++
		case runs.StateFailed:
			r.Failed++
		}
	}
	return r, nil
}

// allFinal reports whether every run is completed or failed.
func (s *Sim) allFinal() bool {
	for id := int64(1); id <= int64(s.knobs.Runs); id++ {
		if st := s.oracle.row(id).State; st != runs.StateCompleted && st != runs.StateFailed {
			return false
		}
	}
	return true
}

// startStoreSide starts the shipped scheduler.Reclaimer and world.Sweeper
// on the store side's runtime, each every P on the store clock. The
// reclaimer's store is reclaimStore (the lag of a late reclaimer, and the
// oracle's and the history's record of each reclaim); the sweep reaches
// the driver directly, its report recorded after each pass.
func (s *Sim) startStoreSide() {
	r := &simRT{l: s.loop}
	log := slog.New(slog.DiscardHandler)
	rc := scheduler.NewReclaimer(&reclaimStore{s: s}, scheduler.ReclaimerConfig{Timing: s.knobs.Timing, Batch: 2,
		Clock: s.storeClock, Runtime: r, Logger: log})
	if err := rc.Start(context.Background()); err != nil {
		panic(err)
	}
	sw := world.NewSweeper(s.store, s.storeClock, s.knobs.Timing, log)
	sw.SetRuntime(r, func(rep *world.SweepReport, err error) {
		if err != nil {
			panic(err)
		}
		for _, w := range rep.Swept {
			s.oracle.swept(w)
			op := s.worldHistory.begin(-1, worldInput{kind: wSweep, holder: w.Granted.Holder})
			s.worldHistory.applied(op, worldOutput{ok: true, epoch: w.Granted.Epoch, holder: w.Granted.Holder,
				positions: []int64{w.Revoked.Position, w.Granted.Position}})
			s.worldHistory.answered(op, true)
		}
	})
	if err := sw.Start(context.Background()); err != nil {
		panic(err)
	}
}

// reclaimStore is the reclaimer's store: each pass may land late —
// up to ReclaimLagMax, a slow replica, within the recovery bound's S — and
// is recorded as it is applied (the history, the oracle's check that no
// live holder lost its run, the dead holders' bound).
type reclaimStore struct {
	runStore
	s    *Sim
	last time.Duration // when the last call landed: a pass's later batches follow at once
}

func (rs *reclaimStore) RunReclaim(_ context.Context, params *driver.RunReclaimParams) (*driver.RunReclaimResult, error) {
	s := rs.s
	if s.loop.now != rs.last { // the first batch of a pass: the pass is late, not each batch
		s.loop.cur.sleep(time.Duration(s.loop.rng.Int64N(int64(s.knobs.ReclaimLagMax) + 1)))
	}
	defer func() { rs.last = s.loop.now }()
	before := map[int64]*driver.Run{}
	for id := int64(1); id <= int64(s.knobs.Runs); id++ {
		before[id] = s.oracle.row(id)
	}
	res, err := s.store.RunReclaim(context.Background(), params)
	if err != nil {
		panic(err)
	}
	for _, r := range res.Reclaimed {
		s.loop.logf("reclaimer takes run %d from %s (fence %d -> %d): %s", r.ID, before[r.ID].Owner, before[r.ID].Fence, r.Fence, r.Reason)
		op := s.history.begin(-1, runInput{run: r.ID, kind: opReclaim})
		s.history.applied(op, runOutput{ok: true, fence: r.Fence, state: r.State})
		s.history.answered(op, true)
		s.oracle.reclaimed(before[r.ID], r)
	}
	return res, nil
}

// scheduleFaults plans the seed's crashes and partitions.
func (s *Sim) scheduleFaults() {
	l, k := s.loop, s.knobs
	exp := func(mean time.Duration) time.Duration {
		return time.Duration(l.rng.ExpFloat64() * float64(mean))
	}
	if k.CrashEvery > 0 {
		for t := exp(k.CrashEvery); t < k.FaultPhase; t += exp(k.CrashEvery) {
			p := s.procs[l.rng.IntN(len(s.procs))]
			down := time.Duration(l.rng.Float64() * float64(k.Timing.Lease))
			l.at(t, func() {
				if p.up {
					s.crashes++
					p.crash()
					l.at(l.now+down, func() {
						if !p.up {
							p.start()
						}
					})
				}
			})
		}
	}
	if k.PauseEvery > 0 {
		for t := exp(k.PauseEvery); t < k.FaultPhase; t += exp(k.PauseEvery) {
			p := s.procs[l.rng.IntN(len(s.procs))]
			l.at(t, func() {
				if p.up {
					p.pause("")
				}
			})
		}
	}
	if k.PartitionEvery > 0 {
		for t := exp(k.PartitionEvery); t < k.FaultPhase; t += exp(k.PartitionEvery) {
			p := s.procs[l.rng.IntN(len(s.procs))]
			d := time.Duration(l.rng.Float64() * float64(k.PartitionMax))
			l.at(t, func() {
				s.partitions++
				l.logf("%s partitioned for %v", p.owner, d.Round(time.Millisecond))
				p.partUntil = max(p.partUntil, l.now+d)
				p.noteFault()
			})
		}
	}
}

// Replay is the command that replays seed exactly.
func Replay(seed uint64) string {
	return fmt.Sprintf("go run ./cmd/leasehold sim --seeds 1 --from %d --verbose", seed)
}
