package server

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/lease"
)

// leaseBook is the server's write-behind keeper for its remote holders
// (docs/design/fencing.md, "Remote holders"): one internal/keeper.Keeper
// for every lease claimed or renewed through this server, whatever the
// runner, with the owner of each. A remote renewal is the keeper's
// in-memory Entry.Renew; one drain per T_drain renews every dirty lease of
// every remote runner in one RunRenewMany (owner per run). What the server
// vouches for — the runway and the gate's available time — is measured
// from the send of the last confirmed expiry-setting write (the claim, a
// drain, a synchronous renewal) on this server's monotonic clock (SPEC
// §1), never from the store's expires_at, so the app↔store clock offset
// plays no part.
//
// It is the server's own knowledge, not the store's: a lease it does not
// know (claimed through another replica, or before a restart) has zero
// runway here, which is the safe direction — a renewal of it is made
// synchronously, and the gate renews before it vouches for anything.
type leaseBook struct {
	k      *keeper.Keeper
	timing lease.Timing

	mu      sync.Mutex // guards m, byRun, pruneAt and ownerModes; never held across a store call
	m       map[driver.RunLeaseRef]held
	byRun   map[int64]int64 // run id → the fence of its entry in m: one lease per run
	pruneAt int
	// ownerModes are the remote runners given a mode of their own
	// (remote_mode.go); the others follow the keeper's.
	ownerModes map[string]keeper.Mode

	clk clock.Clock
	// cut, when set, is the store-clock watch's cut in force at a reading
	// of clk (clockwatch.go): what the runway vouched for is shortened by,
	// as if S were that much wider.
	cut func(now time.Time) time.Duration
	// probe, when set, takes each drain's round trip and the store time it
	// renewed against (clockwatch.go): remote renewals are write-behind, so
	// the drain is what learns the store's clock between claims.
	probe     func(sent, recv, store time.Time)
	log       *slog.Logger
	startOnce sync.Once
	stopLoop  context.CancelFunc // set by start
	loopDone  chan struct{}      // closed when the drain loop returned
}

type held struct {
	owner string
	e     *keeper.Entry
}

const minPrune = 1024

// remoteHoldersWorker is the worker label of the remote holders' keeper
// metrics on /metrics (kind="remote runs").
const remoteHoldersWorker = "remote-holders"

// noOwner is the owner a drain names for a lease forgotten while the
// drain was being assembled: it matches no run, so the row is reported
// lost, and the entry, released already, is untouched by that.
const noOwner = "-forgotten-"

func newLeaseBook(d driver.Driver, clk clock.Clock, t lease.Timing, mode keeper.Mode, log *slog.Logger) (*leaseBook, error) {
	b := &leaseBook{timing: t, m: map[driver.RunLeaseRef]held{}, byRun: map[int64]int64{}, pruneAt: minPrune, clk: clk, log: log}
	// The flush's own timeout (D_stop) runs on real time: it bounds a store
	// call, and a fake clock in a test then drives only the drain's beat.
	k, err := keeper.New(keeper.Config{Kind: "remote runs", Timing: t, Mode: mode, Clock: clk, Logger: log,
		Runtime: rt.Real(clock.Real()),
		Flusher: keeper.FlusherFunc(func(ctx context.Context, refs []keeper.Ref) ([]int, error) {
			return b.flush(ctx, d, refs)
		})})
	if err != nil {
		return nil, err
	}
	b.k = k
	return b, nil
}

// flush is the keeper's drain: one RunRenewMany, an owner per lease.
//
// A run appears in it once: should two of its leases be dirty at once (a
// superseded entry not yet released — confirm releases it, this is the
// second line), the lower fence is reported lost without being sent,
// since a batch naming one run twice is refused whole and would stall
// every remote runner's renewals.
func (b *leaseBook) flush(ctx context.Context, d driver.Driver, refs []keeper.Ref) ([]int, error) {
	p := &driver.RunRenewManyParams{Lease: b.timing.Lease, Runs: make([]driver.RunLeaseRef, 0, len(refs)), Owners: make([]string, 0, len(refs))}
	top := make(map[int64]int64, len(refs)) // run id → highest fence in the batch
	for _, r := range refs {
		top[r.ID] = max(top[r.ID], r.Fence)
	}
	var lost []int
	sent := make([]int, 0, len(refs)) // indexes into refs of p.Runs
	// own[j] is the entry of p.Runs[j] when its runner is in writebehind
	// while the keeper is not (remote_mode.go): the keeper would not take
	// the drain as that lease's evidence, so the flush confirms it.
	var own map[int]*keeper.Entry
	keeperWB := b.k.Mode() == keeper.ModeWriteBehind
	b.mu.Lock()
	for i, r := range refs {
		if r.Fence < top[r.ID] {
			lost = append(lost, i)
			continue
		}
		ref := driver.RunLeaseRef{ID: r.ID, Fence: r.Fence}
		owner := noOwner
		if h, ok := b.m[ref]; ok {
			owner = h.owner
			if m, has := b.ownerModes[owner]; has && m == keeper.ModeWriteBehind && !keeperWB {
				if own == nil {
					own = map[int]*keeper.Entry{}
				}
				own[len(p.Runs)] = h.e
			}
		}
		p.Runs, p.Owners = append(p.Runs, ref), append(p.Owners, owner)
		sent = append(sent, i)
	}
	b.mu.Unlock()
	// One statement per drain, unless the server holds more dirty leases
	// than one statement may carry.
	for from := 0; from < len(p.Runs); from += driver.MaxRunRenewBatch {
		to := min(from+driver.MaxRunRenewBatch, len(p.Runs))
		sentAt := b.clk.Now()
		res, err := d.RunRenewMany(ctx, &driver.RunRenewManyParams{Lease: p.Lease, Runs: p.Runs[from:to], Owners: p.Owners[from:to]})
		if err != nil {
			return nil, err
		}
		if b.probe != nil {
			b.probe(sentAt, b.clk.Now(), res.StoreNow)
		}
		for _, j := range res.Lost {
			lost = append(lost, sent[from+j])
			if e := own[from+j]; e != nil {
				b.forget(driver.RunLeaseRef(e.Ref())) // its next renewal is synchronous: the store decides
				delete(own, from+j)
			}
		}
		for j := from; j < to; j++ {
			if e := own[j]; e != nil {
				e.Confirm(sentAt)
			}
		}
	}
	slices.Sort(lost)
	return lost, nil
}

// start runs the drain, once, from the first lease on: an idle server (or
// one that never serves a claim) runs no loop. stop ends it.
//
// Only the drain runs, not the keeper's self-stop timer: a remote holder
// stops itself on its own deadline (its send time + the runway it was
// given), and what the server vouches for already shrinks to 0 with the
// lag (Entry.Runway) — so a renewal past D_stop is merely flushed, and the
// store refuses it if the lease expired meanwhile.
func (b *leaseBook) start() {
	b.startOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		b.stopLoop, b.loopDone = cancel, make(chan struct{})
		go b.drainLoop(ctx)
	})
}

// drainLoop drains every T_drain; a failed drain is retried with backoff
// from T_drain/8 up to T_drain (its leases stay dirty), as the keeper's
// own loop does (internal/keeper/drain.go). It drains in every mode: only
// the renewals made in writebehind and dark mark a lease (remote_mode.go),
// so in sync nothing is dirty and a drain issues no statement.
func (b *leaseBook) drainLoop(ctx context.Context) {
	defer close(b.loopDone)
	next, backoff := b.timing.Drain, time.Duration(0)
	for {
		t, tc := b.clk.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-tc:
		}
		next = b.timing.Drain
		if err := b.k.DrainOnce(ctx); err != nil && ctx.Err() == nil {
			backoff = min(max(backoff*2, b.timing.Drain/8), b.timing.Drain)
			next = backoff
			b.log.Warn("remote leases: drain failed; retrying", "in", backoff, "err", err)
		} else {
			backoff = 0
		}
	}
}

// stop ends the drain loop and drains once more within ctx, so the last
// renewals asked for are not dropped. Idempotent; a stopped book never
// starts.
func (b *leaseBook) stop(ctx context.Context) error {
	b.startOnce.Do(func() {})
	if b.stopLoop == nil {
		return nil
	}
	b.stopLoop()
	<-b.loopDone
	return b.k.DrainOnce(ctx)
}

// confirm records that a write sent at sent, for owner, set the lease's
// expiry: the claim or a synchronous renewal. A lease the keeper had given
// up (lost by a drain, self-stopped) and the store has just renewed starts
// a new entry.
func (b *leaseBook) confirm(ref driver.RunLeaseRef, owner string, sent time.Time) {
	b.start()
	b.mu.Lock()
	defer b.mu.Unlock()
	if h, ok := b.m[ref]; ok {
		if h.owner == owner && h.e.Live() {
			h.e.Confirm(sent)
			return
		}
		b.dropLocked(ref)
	}
	if f, ok := b.byRun[ref.ID]; ok {
		if f > ref.Fence {
			return // a newer claim of the run is kept: this older lease cannot be current
		}
		b.dropLocked(driver.RunLeaseRef{ID: ref.ID, Fence: f}) // superseded by this claim
	}
	e, err := b.k.Add(lease.Ref(ref), sent, nil)
	if err != nil {
		return // kept already (a concurrent confirm won): its evidence stands
	}
	b.m[ref] = held{owner: owner, e: e}
	b.byRun[ref.ID] = ref.Fence
	if len(b.m) >= b.pruneAt {
		b.pruneLocked()
	}
}

// renew is a remote renewal, write-behind: the lease is marked for the
// next drain, with no store call, when this server keeps it live for this
// owner. false means it must be renewed synchronously (unknown here, given
// up, or asked for by another owner — whom the store will refuse).
func (b *leaseBook) renew(ref driver.RunLeaseRef, owner string) bool {
	b.mu.Lock()
	h, ok := b.m[ref]
	b.mu.Unlock()
	if !ok || h.owner != owner || !h.e.Live() {
		return false
	}
	h.e.Renew()
	return true
}

// pruneLocked drops leases the keeper gave up or whose runway ran out: a
// runner that vanished without finishing its runs does not grow the book
// without bound.
func (b *leaseBook) pruneLocked() {
	for ref, h := range b.m {
		if r, _ := h.e.Runway(); r == 0 {
			b.dropLocked(ref)
		}
	}
	b.pruneAt = max(2*len(b.m), minPrune)
}

// forget drops a lease that ended (completed, failed, blocked, cancelled,
// fenced out): it is never flushed again.
func (b *leaseBook) forget(ref driver.RunLeaseRef) {
	b.mu.Lock()
	b.dropLocked(ref)
	b.mu.Unlock()
}

// dropLocked releases ref's entry, if kept, from the keeper and the book.
func (b *leaseBook) dropLocked(ref driver.RunLeaseRef) {
	h, ok := b.m[ref]
	if !ok {
		return
	}
	b.k.Release(h.e)
	delete(b.m, ref)
	if b.byRun[ref.ID] == ref.Fence {
		delete(b.byRun, ref.ID)
	}
}

func (b *leaseBook) entry(ref driver.RunLeaseRef) *keeper.Entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[ref].e
}

// runway is the lease's runway now, 0 if the book does not know it, less
// any store-clock cut in force.
func (b *leaseBook) runway(ref driver.RunLeaseRef) time.Duration {
	r, _ := b.vouch(ref)
	return r
}

// available is what the side-effect gate may count on (SPEC §2):
// min(runway, D_stop - lag), lag being the time since the send of the last
// confirmed write.
func (b *leaseBook) available(ref driver.RunLeaseRef) time.Duration {
	_, a := b.vouch(ref)
	return a
}

// vouch is the runway and the gate's available time of a lease. A
// store-clock cut x in force widens S by x, which shortens the runway by
// x and, D_stop being capped under the widened T_lease − S, bounds the
// available time by that shortened runway too.
func (b *leaseBook) vouch(ref driver.RunLeaseRef) (runway, available time.Duration) {
	e := b.entry(ref)
	if e == nil {
		return 0, 0
	}
	runway, available = e.Runway()
	if b.cut != nil {
		if x := b.cut(b.clk.Now()); x > 0 {
			runway = lease.SubSat(runway, x)
			available = min(available, runway)
		}
	}
	return runway, available
}

// bookEntry is one lease the book vouches for, as the dashboard lists it.
type bookEntry struct {
	ref   driver.RunLeaseRef
	owner string
	lag   time.Duration // since the send of its last confirmed write
}

// snapshot returns the leases the book knows with runway left, by run id
// then fence, at most limit of them, and how many there are in all.
func (b *leaseBook) snapshot(limit int) (out []bookEntry, total int) {
	b.mu.Lock()
	for ref, h := range b.m {
		if r, _ := h.e.Runway(); r > 0 {
			out = append(out, bookEntry{ref: ref, owner: h.owner, lag: h.e.Lag()})
		}
	}
	b.mu.Unlock()
	slices.SortFunc(out, func(a, c bookEntry) int {
		return cmp.Or(cmp.Compare(a.ref.ID, c.ref.ID), cmp.Compare(a.ref.Fence, c.ref.Fence))
	})
	total = len(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, total
}

// ms is a runway on the wire: whole milliseconds, rounded down, so the
// client's deadline is never later than the server's.
func ms(d time.Duration) int64 { return max(d.Milliseconds(), 0) }
