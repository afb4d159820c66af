package keeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/internal/clockwatch"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/startstop"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// Flusher writes one drain to the store: it renews every lease of refs in
// one statement (or one transaction), writing only expiries under the
// fence-and-unexpired rule, and returns the indexes of refs, ascending, of
// the leases it did not renew. An error means nothing is known to have
// been renewed.
type Flusher interface {
	Flush(ctx context.Context, refs []Ref) (lost []int, err error)
}

// withFlushTimeout bounds a flush by d on the keeper's runtime (the
// simulator's deadline is virtual time, so a flush there waits exactly d).
func (k *Keeper) withFlushTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return k.rt.WithTimeout(ctx, d)
}

// FlusherFunc adapts a function to Flusher.
type FlusherFunc func(ctx context.Context, refs []Ref) ([]int, error)

// Flush calls f.
func (f FlusherFunc) Flush(ctx context.Context, refs []Ref) ([]int, error) { return f(ctx, refs) }

// Config configures a Keeper. Zero values mean the defaults.
type Config struct {
	// Kind names the resource kind in metrics and logs ("runs").
	// Defaults to "runs".
	Kind string
	// Timing is validated by New. Required.
	Timing lease.Timing
	// Flusher writes the drains. Required.
	Flusher Flusher
	// Mode is the starting mode. Defaults to ModeWriteBehind.
	Mode Mode
	// WatchEvery is the self-stop timer's period. Defaults to
	// min(1s, D_stop/8): at least every second, as SPEC §2 asks, and often
	// enough that a scaled-down D_stop is still honoured closely.
	WatchEvery time.Duration
	// Clock defaults to the real clock.
	Clock clock.Clock
	// Runtime runs the drain and watch loops and times their waits.
	// Defaults to rt.Real(Clock); the simulator sets its own.
	Runtime rt.Runtime
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

var _ startstop.Service = (*Keeper)(nil)

// Keeper keeps the leases one process holds of one resource kind.
type Keeper struct {
	cfg   Config
	t     lease.Timing
	clock clock.Clock
	rt    rt.Runtime
	base  time.Time     // offsets are from this reading of the monotonic clock
	bound time.Duration // GateBound(t), folded once for the gate
	mode  atomic.Int32

	mu      sync.Mutex // guards entries; never held across a store call
	entries map[Ref]*Entry

	drainMu sync.Mutex // one drain at a time; guards the scratch slices
	batch   []*Entry
	refs    []Ref

	stats   stats
	metrics *metrics

	watch       *clockwatch.Watch // the runtime store-clock watch (clockwatch.go)
	clockExcess atomic.Int64      // ns the runway is shortened beyond S; 0 normally

	life startstop.Lifecycle // the drain and watch loops
}

// New validates cfg and returns a keeper; Start runs its drain and
// self-stop timer.
func New(cfg Config) (*Keeper, error) {
	if err := cfg.Timing.Validate(); err != nil {
		return nil, err
	}
	if cfg.Flusher == nil {
		return nil, &journal.InputError{Field: "flusher", Problem: "a keeper needs a flusher"}
	}
	if !cfg.Mode.valid() {
		return nil, &journal.InputError{Field: "mode", Problem: fmt.Sprintf("unknown mode %d", cfg.Mode)}
	}
	if cfg.Kind == "" {
		cfg.Kind = "runs"
	}
	if cfg.WatchEvery <= 0 {
		cfg.WatchEvery = min(time.Second, cfg.Timing.Stop/8)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Runtime == nil {
		cfg.Runtime = rt.Real(cfg.Clock)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	k := &Keeper{cfg: cfg, t: cfg.Timing, clock: cfg.Clock, rt: cfg.Runtime, base: cfg.Clock.Now(), entries: map[Ref]*Entry{}}
	k.bound = GateBound(k.t)
	k.life.Name = "keeper " + cfg.Kind
	k.life.RT = cfg.Runtime
	k.mode.Store(int32(cfg.Mode))
	k.watch = clockwatch.New(cfg.Timing)
	k.metrics = newMetrics(k)
	return k, nil
}

// Timing returns the keeper's timing.
func (k *Keeper) Timing() lease.Timing { return k.t }

// now is the monotonic clock's reading as an offset from base.
// Since reads only the monotonic clock for a reading that carries one
// (time.Since skips the wall clock), which halves the gate's cost.
func (k *Keeper) now() time.Duration { return k.clock.Since(k.base) }

// offset converts a reading of the keeper's clock to an offset.
func (k *Keeper) offset(t time.Time) time.Duration { return t.Sub(k.base) }

// Mode returns the current mode.
func (k *Keeper) Mode() Mode { return Mode(k.mode.Load()) }

// SetMode switches the mode at runtime; every switch is reversible. Each
// entry's evidence is carried across: both paths take the later of their
// two send times, so the mode switched to never decides from a path that
// was idle under the mode switched from (a drain confirmation and a
// synchronous renewal are equally writes that set the expiry).
func (k *Keeper) SetMode(m Mode) error {
	if !m.valid() {
		return &journal.InputError{Field: "mode", Problem: fmt.Sprintf("unknown mode %d", m)}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, e := range k.entries {
		s := max(e.syncSent.Load(), e.drainSent.Load())
		advance(&e.syncSent, time.Duration(s))
		advance(&e.drainSent, time.Duration(s))
	}
	if old := Mode(k.mode.Swap(int32(m))); old != m {
		k.stats.modeSwitches[old][m].Add(1)
		k.cfg.Logger.Info("heartbeat mode switched", "kind", k.cfg.Kind, "from", old, "to", m)
	}
	return nil
}

// Add starts keeping a lease whose expiry was set by a write (the claim)
// sent at sent, a reading of the keeper's clock. cancel is called, once,
// with the reason when the lease is lost or the holder must stop. A Ref
// already kept is refused: a new claim always carries a new fence.
func (k *Keeper) Add(ref Ref, sent time.Time, cancel context.CancelCauseFunc) (*Entry, error) {
	e := &Entry{k: k, ref: ref, cancel: cancel}
	s := k.offset(sent)
	e.syncSent.Store(int64(s))
	e.drainSent.Store(int64(s))
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, dup := k.entries[ref]; dup {
		return nil, &journal.InputError{Field: "fence", Problem: fmt.Sprintf("lease %d/%d is already kept", ref.ID, ref.Fence)}
	}
	k.entries[ref] = e
	return e, nil
}

// Release stops keeping e (its holder finished); it is never flushed
// again.
func (k *Keeper) Release(e *Entry) {
	e.giveUp(errReleased, nil)
	k.mu.Lock()
	if k.entries[e.ref] == e {
		delete(k.entries, e.ref)
		// A gate pass racing this release (already past its liveness
		// check) may be counted on e after this and not reach the total.
		k.stats.gatePass.Add(e.gatePasses.Load())
	}
	k.mu.Unlock()
}

var errReleased = errors.New("keeper: lease released by its holder")

// CancelHolders cancels the context of every lease's holder kept now
// (cause context.Canceled): what the holders' shared parent context did
// when it was cancelled, without each holder's context registering with
// one (the worker's Stop past its grace).
func (k *Keeper) CancelHolders() {
	k.mu.Lock()
	cs := make([]context.CancelCauseFunc, 0, len(k.entries))
	for _, e := range k.entries {
		if e.cancel != nil {
			cs = append(cs, e.cancel)
		}
	}
	k.mu.Unlock()
	for _, c := range cs {
		c(nil)
	}
}

// Len returns how many leases are kept.
func (k *Keeper) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.entries)
}

// Start runs the drain (every T_drain, in dark and writebehind) and the
// self-stop timer until Stop or ctx ends. It is idempotent; after Stop it
// returns startstop.ErrStopped.
func (k *Keeper) Start(ctx context.Context) error {
	return k.life.Start(ctx, func(ctx context.Context) error {
		k.life.Go("drain", func() { k.drainLoop(ctx) })
		k.life.Go("watch", func() { k.watchLoop(ctx) })
		return nil
	})
}

// Stop ends the loops and waits for them until ctx ends. The drain loop
// flushes once more on its way out (SPEC §2), within ctx's deadline, so a
// renewal made just before the stop still reaches the store.
func (k *Keeper) Stop(ctx context.Context) error { return k.life.Stop(ctx, nil) }

// Started is closed once the keeper's loops run.
func (k *Keeper) Started() <-chan struct{} { return k.life.Started() }

// Stopped is closed once the keeper's loops have returned.
func (k *Keeper) Stopped() <-chan struct{} { return k.life.Stopped() }

// live returns the live entries, appended to dst.
func (k *Keeper) live(dst []*Entry) []*Entry {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, e := range k.entries {
		if e.state.Load() == live {
			dst = append(dst, e)
		}
	}
	return dst
}
