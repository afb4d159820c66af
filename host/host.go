package host

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/bugs"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/startstop"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// Store is the part of the store of record a host uses: the holder's
// calls and the journal read its mirror replays. A driver.Driver is one.
type Store interface {
	world.Store
	// WorldCreate creates a world (Host.Create).
	WorldCreate(ctx context.Context, p *driver.WorldCreateParams) (*driver.World, error)
	// JournalRead returns entries from p.From on, in order.
	JournalRead(ctx context.Context, p *driver.JournalReadParams) ([]journal.Entry, error)
}

var _ Store = driver.Driver(nil)

// Config configures a Host. Zero values mean the defaults.
type Config struct {
	// Store is the store of record. Required.
	Store Store
	// Node is this host's identity: the holder name its leases are granted
	// to, the same across restarts. Required.
	Node string
	// Program is what the worlds held here run. Required.
	Program Program
	// Clock is the host's monotonic clock (runway is measured on it).
	// Defaults to clock.Real.
	Clock clock.Clock
	// Timing is the world lease timing; zero fields default to
	// lease.WorldDefaults() (30 s term, 5 s renew, 1 s drain, 15 s D_stop, 5 s S).
	Timing lease.Timing
	// InboxLimit bounds the commands queued per world; a submission past it
	// gets *OverloadedError. Defaults to 10,000.
	InboxLimit int
	// MaxBatch bounds the commands one turn batch (one group commit)
	// carries. Defaults to 512 (the world appender's largest batch).
	MaxBatch int
	// KeyRetention and MaxKeys bound the replies a world's mirror keeps in
	// memory by key (defaults 24 h and 1,000,000). They bound memory, not
	// idempotency: the journal keeps every key forever, so a retry of a
	// forgotten key is still applied once and answered from its entry.
	KeyRetention time.Duration
	MaxKeys      int
	// Band is the hot-world policy; nil (or no threshold set) disables it.
	Band *Band
	// HomePool is the pool this host serves as a home replica of (SPEC §4
	// "Holders and home"): a world whose Home names the pool and whose
	// holder's lease expires is granted by the sweep to one of the pool's
	// live replicas. When set, Start joins the pool with a term of
	// Timing.Lease, the host renews its membership every Timing.Renew, and
	// Stop leaves it; a host that dies drops out when its membership
	// expires. At start and on each renewal it also makes the first look
	// at every world homed on the pool it has not looked at yet, so that
	// it may adopt the world when the sweep grants it here (homepool.go).
	// Empty: the host is no home replica. The Store must then implement
	// PoolStore (a driver.Driver does).
	HomePool string
	// ExtendBelow is the world keeper's rule (keeper.go): a drain journals
	// lease.renewed for a world only when its runway from its last
	// extension is below ExtendBelow. Defaults to (T_lease − S)/2; it must
	// exceed T_drain and be at most T_lease − S.
	ExtendBelow time.Duration
	// SyncRenewals turns the keeper off: each world's loop renews its own
	// lease synchronously every T_renew (one lease.renewed per world per
	// T_renew), as a Store without driver.WorldRenewer always does.
	SyncRenewals bool
	// Effector runs the side effects programs decide (effects.go). Nil: a
	// command whose decision asks for effects is refused (*CommandError).
	Effector Effector
	// Key is the node's ed25519 key (LoadOrCreateKey reads one from a
	// file). Start registers its public half in the store under Node; a
	// grant or handoff to the node then carries it, and the host signs
	// every batch it appends under such an epoch (journal/sign.go). Nil:
	// Start makes a key for this process — a host that restarts is granted
	// its worlds anew anyway (world.Holder's ABA rule), so only an operator
	// who pins a node's key needs the file. Signing needs a Store with
	// the key registry (driver.NodeKeyStore, which a driver.Driver has);
	// with another Store the host signs nothing.
	Key ed25519.PrivateKey
	// SnapshotEvery is how often a holder snapshots a world's state: when
	// its mirror has folded SnapshotEvery positions past the last
	// snapshot, after a batch lands, and once more after each handoff
	// (snapshot.go). A node preparing the world then restores the snapshot
	// and replays only the entries after it. It needs a Program whose
	// State is a Snapshotter and a Store with driver.SnapshotStore (a
	// driver.Driver has it); otherwise every mirror replays from position
	// 1. Defaults to 10,000; negative: the host takes none (it still
	// restores the ones it finds).
	SnapshotEvery int64
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Runtime is the seam goroutines and waits go through (the simulator's
	// in its runs); defaults to the real one on Clock.
	Runtime rt.Runtime
}

func (c *Config) withDefaults() error {
	if c.Store == nil || c.Program == nil {
		return fmt.Errorf("host: a Store and a Program are required: %w", lease.ErrInvalid)
	}
	if err := journal.ValidateID("node", c.Node); err != nil {
		return err
	}
	if err := journal.ValidateID("program", c.Program.Name()); err != nil {
		return err
	}
	c.Timing = c.Timing.WithDefaults(lease.WorldDefaults())
	if err := c.Timing.Validate(); err != nil {
		return err
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	full := c.Timing.Lease - c.Timing.Skew
	if c.ExtendBelow == 0 {
		c.ExtendBelow = full / 2
	}
	if c.ExtendBelow <= c.Timing.Drain || c.ExtendBelow > full {
		return fmt.Errorf("host: ExtendBelow %s must be above T_drain %s and at most T_lease − S = %s: %w",
			c.ExtendBelow, c.Timing.Drain, full, lease.ErrInvalid)
	}
	if c.InboxLimit <= 0 {
		c.InboxLimit = 10_000
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 512
	}
	if c.KeyRetention <= 0 {
		c.KeyRetention = 24 * time.Hour
	}
	if c.MaxKeys <= 0 {
		c.MaxKeys = 1_000_000
	}
	if c.SnapshotEvery == 0 {
		c.SnapshotEvery = 10_000
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Runtime == nil {
		c.Runtime = rt.Real(c.Clock)
	}
	if c.HomePool != "" {
		if err := journal.ValidateID("home pool", c.HomePool); err != nil {
			return err
		}
		if _, ok := c.Store.(PoolStore); !ok {
			return fmt.Errorf("host: a HomePool needs a Store with the home pool calls and the world list (host.PoolStore): %w", lease.ErrInvalid)
		}
	}
	if c.Band.enabled() {
		b := *c.Band
		b.withDefaults()
		if b.Mover == nil {
			return fmt.Errorf("host: a Band needs a Mover (a Router over the hosts): %w", lease.ErrInvalid)
		}
		for _, n := range b.Spill {
			if err := journal.ValidateID("spill node", n); err != nil {
				return err
			}
		}
		c.Band = &b
	}
	return nil
}

// Reply is a command's answer.
type Reply struct {
	// Position is the journal position of the command's turn entry.
	Position int64
	// Payload is the program's reply (nil for none).
	Payload json.RawMessage
	// Duplicate is true when the command had been applied before (a retry)
	// and this is the first application's reply.
	Duplicate bool
	// Effects are the outcomes of the command's side effects (effects.go).
	Effects []EffectOutcome
}

// Host holds the write leases of some worlds and runs their turns: SPEC
// §4's holder, with a mirror of each world's state and an inbox of
// commands. See docs/design/worlds.md.
type Host struct {
	cfg   Config
	clock clock.Clock
	log   *slog.Logger
	life  startstop.Lifecycle
	key   ed25519.PrivateKey // the key registered at Start; nil: none (the Store has no registry)
	// renewer is the Store's drain (driver.WorldRenewer) when it has one:
	// the world keeper (keeper.go) renews every held world then; without
	// it each world's loop renews its own lease every T_renew.
	renewer driver.WorldRenewer

	mu    sync.Mutex
	held  map[string]*hosted
	slots map[string]*slot // every world this host generation has looked at (or tried to)
	// looked: the worlds whose holder has made its first look (marked
	// under the slot's lock, right after the look), so the home pool's
	// looks skip them without touching a holder another goroutine drives.
	looked map[string]bool
	ctx    context.Context

	selfStops, acquired, released, spills, handbacks, lookedN atomic.Int64
	effects, gateRefusals, drains, extensions                 atomic.Int64
	entriesRead, snapsRestored, snapsIgnored, snapsTaken      atomic.Int64
	turnBatches, turnEntries, appendWait, decideTime          atomic.Int64
}

// Stats are a host's counters since it started.
type Stats struct {
	Acquired  int64 `json:"acquired"`   // worlds acquired
	Released  int64 `json:"released"`   // worlds let go: handed off, lost, stopped
	Spills    int64 `json:"spills"`     // hot-world band: worlds this host spilled to a spill node
	Handbacks int64 `json:"handbacks"`  // hot-world band: worlds this host handed back home
	SelfStops int64 `json:"self_stops"` // worlds let go because the lease could not be confirmed: a failed renewal, or the durable lag at D_stop
	Looked    int64 `json:"looked"`     // worlds this host generation has made its first look at (Prepare, Acquire, Create, the home pool's looks)
	Effects   int64 `json:"effects"`    // side effects invoked (effects.go)
	// GateRefusals counts turn batches whose effects the side-effect gate
	// refused for want of lease runway (their commands answered ErrLeaseRunway).
	GateRefusals int64 `json:"gate_refusals"`
	// Drains counts the world keeper's drains (one store call for every
	// held world), Extensions the lease.renewed entries they journaled.
	Drains     int64 `json:"drains"`
	Extensions int64 `json:"extensions"`
	// EntriesRead counts the journal entries the mirrors read: replays
	// (Prepare, Acquire, rebuilds) and the snapshot checks (snapshot.go).
	EntriesRead int64 `json:"entries_read"`
	// SnapshotsTaken counts the world snapshots this host stored;
	// SnapshotsRestored those its mirrors started from; SnapshotsIgnored
	// those found and not trusted (another journal, a bad checksum, a
	// Restore that failed), after which the mirror replayed from 1.
	SnapshotsTaken    int64 `json:"snapshots_taken"`
	SnapshotsRestored int64 `json:"snapshots_restored"`
	SnapshotsIgnored  int64 `json:"snapshots_ignored"`
	// TurnBatches counts the turn batches the loops sent (one group
	// commit each) and TurnEntries the entries they carried:
	// TurnEntries/TurnBatches is the mean batch. AppendWaitNanos is the
	// time the loops spent blocked on a batch's append (the store's share
	// of a turn, less what overlapped the next batch's decisions), and
	// DecideNanos the time they spent deciding commands (the program's
	// and the mirror's share).
	TurnBatches     int64 `json:"turn_batches"`
	TurnEntries     int64 `json:"turn_entries"`
	AppendWaitNanos int64 `json:"append_wait_nanos"`
	DecideNanos     int64 `json:"decide_nanos"`
}

// Stats returns the host's counters.
func (h *Host) Stats() Stats {
	return Stats{Acquired: h.acquired.Load(), Released: h.released.Load(), SelfStops: h.selfStops.Load(),
		Spills: h.spills.Load(), Handbacks: h.handbacks.Load(), Looked: h.lookedN.Load(),
		Effects: h.effects.Load(), GateRefusals: h.gateRefusals.Load(), Drains: h.drains.Load(), Extensions: h.extensions.Load(),
		EntriesRead: h.entriesRead.Load(), SnapshotsTaken: h.snapsTaken.Load(), SnapshotsRestored: h.snapsRestored.Load(),
		SnapshotsIgnored: h.snapsIgnored.Load(), TurnBatches: h.turnBatches.Load(), TurnEntries: h.turnEntries.Load(),
		AppendWaitNanos: h.appendWait.Load(), DecideNanos: h.decideTime.Load()}
}

// slot is what this host generation keeps of one world, held or not: its
// one Holder (the holder's memory — the epoch at its first look, the
// epochs it gave away — must span the generation, or the ABA rules of
// world.Holder would be void) and its mirror, kept warm for a handback.
type slot struct {
	mu     slotLock // one Prepare / Acquire / Create of the world at a time
	holder *world.Holder
	m      *mirror
}

// slotLock is a mutex held across store calls (a look, a replay, the
// synchronous renewal), so a caller that finds it taken waits through the
// runtime — the simulator's loop must see every wait — and gives up when
// its context ends.
type slotLock struct {
	mu   sync.Mutex // guards held and free; never held across a wait
	held bool
	free rt.Event // fired when the holder unlocks; nil while nobody waits
}

func (l *slotLock) lock(ctx context.Context, r rt.Runtime) error {
	for {
		l.mu.Lock()
		if !l.held {
			l.held = true
			l.mu.Unlock()
			return nil
		}
		if l.free == nil {
			l.free = r.NewEvent()
		}
		free := l.free
		l.mu.Unlock()
		if r.Wait(ctx, free, -1) == rt.Done {
			return ctx.Err()
		}
	}
}

func (l *slotLock) unlock() {
	l.mu.Lock()
	free := l.free
	l.held, l.free = false, nil
	l.mu.Unlock()
	if free != nil {
		free.Fire()
	}
}

var _ startstop.Service = (*Host)(nil)

// New returns a started Host holding no world.
func New(cfg Config) (*Host, error) {
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	h := &Host{cfg: cfg, clock: cfg.Clock, log: cfg.Logger,
		held: map[string]*hosted{}, slots: map[string]*slot{}, looked: map[string]bool{}}
	h.life.Name, h.life.RT = "host "+cfg.Node, cfg.Runtime
	if err := h.Start(context.Background()); err != nil {
		return nil, err
	}
	return h, nil
}

// Start is idempotent (New starts the host); after Stop it returns
// startstop.ErrStopped.
//
// With Config.HomePool set it joins the pool before it returns (an error
// joining fails Start) and keeps the membership renewed (homepool.go).
func (h *Host) Start(ctx context.Context) error {
	return h.life.Start(ctx, func(ctx context.Context) error {
		h.mu.Lock()
		h.ctx = ctx
		h.mu.Unlock()
		if err := h.registerKey(ctx); err != nil {
			return err
		}
		if r, ok := h.cfg.Store.(driver.WorldRenewer); ok && !h.cfg.SyncRenewals {
			h.renewer = r
			h.life.Go("world keeper "+h.cfg.Node, func() { h.runKeeper(ctx, r) })
		}
		return h.startHomePool(ctx)
	})
}

// Stop stops every world's loop: commands not yet journaled are answered
// with a retryable *NotHolderError and the leases are left to expire (the
// sweep grants them home; a host that restarts under the same node name
// must be granted anew). A home replica leaves its pool (Config.HomePool).
// It waits until ctx ends.
func (h *Host) Stop(ctx context.Context) error {
	return h.life.Stop(ctx, nil)
}

// Started is closed once the host runs.
func (h *Host) Started() <-chan struct{} { return h.life.Started() }

// Stopped is closed once every world's loop has returned.
func (h *Host) Stopped() <-chan struct{} { return h.life.Stopped() }

// Node is the host's identity.
func (h *Host) Node() string { return h.cfg.Node }

// Held lists the worlds held here.
func (h *Host) Held() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]string, 0, len(h.held))
	for w := range h.held {
		out = append(out, w)
	}
	return out
}

// Acquire starts holding a world whose lease the store delivered to this
// node (a grant, or a handoff to it): it adopts the epoch, replays the
// journal through the head into the mirror (so through the epoch's grant),
// renews synchronously — the runway starts from that send — and starts
// the world's loop. It is a no-op for a world held here.
//
// *NotHolderError when the head does not deliver the world to this host
// generation. That includes an epoch that was already current when this
// generation first looked at the world (world.Holder's ABA rule: it may be
// a predecessor's under the same node name): a planned handoff therefore
// has the receiver Prepare first, and a restarted host waits for the
// expiry sweep's grant.
func (h *Host) Acquire(ctx context.Context, w string) error {
	_, err := h.acquire(ctx, w, nil)
	return err
}

// Prepare looks at a world and warms its mirror without holding it: the
// first look a handoff's receiver needs (see Acquire), and a replay done
// before the handoff so that the acquire after it replays only the tail.
// On a host that holds the world it does nothing: the world's loop owns the
// holder and the mirror then (touching them here raced with its turns).
func (h *Host) Prepare(ctx context.Context, w string) error {
	s, err := h.lockedSlot(ctx, w)
	if err != nil {
		return err
	}
	defer s.mu.unlock()
	h.mu.Lock()
	held := h.held[w] != nil
	h.mu.Unlock()
	if held { // acquire sets held under s.mu, so this cannot change while we hold it
		return nil
	}
	if _, _, err := s.holder.Read(ctx); err != nil {
		return err
	}
	h.markLooked(w)
	return s.m.catchUp(ctx, h.cfg.Store, h.clock.Now)
}

// Create creates a world and holds it: the first grant is this
// generation's own, so it is adopted at once. Its home is the host's home
// pool (Config.HomePool) when it serves one — so the sweep grants a live
// replica of the pool when this host dies — else this node.
func (h *Host) Create(ctx context.Context, w string) error {
	home := h.cfg.Node
	if h.cfg.HomePool != "" {
		home = h.cfg.HomePool
	}
	// The slot's lock is taken before the world exists: the pool's look
	// (firstLook) lists the pool's worlds on its own tick, and had it read
	// the new world between WorldCreate and the acquire, its first look
	// would fix the horizon at epoch 1 and Created could no longer adopt
	// the grant this call made (CI saw Create fail so, under load).
	s, err := h.lockedSlot(ctx, w)
	if err != nil {
		return err
	}
	defer s.mu.unlock()
	head, err := h.cfg.Store.WorldCreate(ctx, &driver.WorldCreateParams{World: w, Home: home, Holder: h.cfg.Node, Term: h.cfg.Timing.Lease})
	if err != nil {
		return err
	}
	_, err = h.acquireLocked(ctx, w, s, head)
	return err
}

func (h *Host) slot(w string) (*slot, error) {
	if err := journal.ValidateID("world", w); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx == nil || h.ctx.Err() != nil {
		return nil, fmt.Errorf("host %s: %w", h.cfg.Node, lease.ErrClosed)
	}
	s := h.slots[w]
	if s == nil {
		holder, err := world.NewHolder(world.HolderConfig{Store: h.cfg.Store, Clock: h.clock, World: w, Name: h.cfg.Node, Timing: h.cfg.Timing, Key: h.key})
		if err != nil {
			return nil, err
		}
		s = &slot{holder: holder, m: newMirror(w, h.cfg.Program, h.cfg.KeyRetention, h.cfg.MaxKeys, h.mirrorSnaps())}
		h.slots[w] = s
	}
	return s, nil
}

// lockedSlot is w's slot with its lock taken (the caller unlocks it).
func (h *Host) lockedSlot(ctx context.Context, w string) (*slot, error) {
	s, err := h.slot(w)
	if err != nil {
		return nil, err
	}
	if err := s.mu.lock(ctx, h.cfg.Runtime); err != nil {
		return nil, err
	}
	return s, nil
}

// markLooked records that w's holder has looked (call it under the
// slot's lock, after a successful Read, Observe or Created).
func (h *Host) markLooked(w string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.looked[w] {
		h.looked[w] = true
		h.lookedN.Add(1)
	}
}

// hasLooked reports whether w's holder has made its first look.
func (h *Host) hasLooked(w string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.looked[w]
}

// acquire holds w (created: the head its own WorldCreate answered).
func (h *Host) acquire(ctx context.Context, w string, created *driver.World) (*hosted, error) {
	h.mu.Lock()
	hw := h.held[w]
	h.mu.Unlock()
	if hw != nil {
		return hw, nil
	}
	s, err := h.lockedSlot(ctx, w)
	if err != nil {
		return nil, err
	}
	defer s.mu.unlock()
	return h.acquireLocked(ctx, w, s, created)
}

// acquireLocked is acquire with w's slot lock held by the caller.
func (h *Host) acquireLocked(ctx context.Context, w string, s *slot, created *driver.World) (*hosted, error) {
	h.mu.Lock()
	hw, loopCtx := h.held[w], h.ctx
	h.mu.Unlock()
	if hw != nil { // acquired while this call waited
		return hw, nil
	}
	holder, m := s.holder, s.m
	var adopted bool
	var head *driver.World
	var err error
	if created != nil {
		head, adopted = created, holder.Created(created)
	} else if head, adopted, err = holder.Read(ctx); err != nil {
		return nil, err
	}
	h.markLooked(w)
	if !adopted {
		return nil, &NotHolderError{World: w, Holder: head.State.Holder, Epoch: head.State.Epoch}
	}
	from, replayAt := m.pos, h.clock.Now()
	if !bugs.HostSkipsReplay { // planted (-tags simbugs): no replay before the first append
		if err := m.catchUp(ctx, h.cfg.Store, h.clock.Now); err != nil {
			return nil, err
		}
	}
	if bugs.MirrorForgetsKeys { // planted (-tags simbugs): retries are decided again
		m.keys, m.order = map[string]keyRecord{}, nil
	}
	sent := h.clock.Now()
	if err := holder.Renew(ctx); err != nil {
		return nil, err
	}
	renewed := h.clock.Now()
	if m.pos < holder.GrantedAt() && !bugs.HostSkipsReplay { // the grant landed after the replay read the tail: read it too
		if err := m.catchUp(ctx, h.cfg.Store, h.clock.Now); err != nil {
			return nil, err
		}
	}
	hw = &hosted{h: h, world: w, holder: holder, m: m, renewedAt: sent, confirmedAt: sent, home: head.Home, bandAt: h.clock.Now(),
		keepEpoch: holder.Epoch(), extendedAt: sent}
	if h.cfg.Band.enabled() {
		hw.load.window = h.cfg.Band.Window
	}
	hw.sig.RT = h.cfg.Runtime
	hw.stopped = h.cfg.Runtime.NewEvent()
	hw.load.init(h.clock.Now())
	h.mu.Lock()
	h.held[w] = hw
	h.mu.Unlock()
	h.acquired.Add(1)
	// Logged before the loop starts: from then on the holder and the
	// mirror are the loop's alone.
	h.log.Info("world acquired", "world", w, "node", h.cfg.Node, "epoch", holder.Epoch(),
		"granted_at", holder.GrantedAt(), "mirror_at", m.pos, "replayed", m.pos-from,
		"replay", sent.Sub(replayAt), "renew", renewed.Sub(sent))
	h.life.Go("world "+w, func() { hw.loop(loopCtx) })
	return hw, nil
}

// drop forgets a world whose loop ended; its slot (holder and mirror)
// stays for a later Acquire.
func (h *Host) drop(hw *hosted) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held[hw.world] == hw {
		delete(h.held, hw.world)
		h.released.Add(1)
	}
}

// Submit applies a command to a world held here, or to a world the store
// has delivered to this node (it is acquired first), and returns its reply
// once the command's turn is durable under the world's current epoch.
//
// Errors: *NotHolderError (retryable; it names the holder when known),
// *OverloadedError (retry after its delay), *UnknownOutcomeError (retry
// with the same key), *KeyReusedError, *CommandError (the program
// refused), *journal.InputError (bad key or payload). On every error but
// UnknownOutcomeError nothing was applied.
func (h *Host) Submit(ctx context.Context, w string, cmd Command) (Reply, error) {
	cmd, err := validCommand(cmd)
	if err != nil {
		return Reply{}, err
	}
	payload := []byte(cmd.Payload)
	hw, err := h.acquire(ctx, w, nil)
	if err != nil {
		return Reply{}, err
	}
	p := &pending{ctx: ctx, cmd: cmd, hash: commandHash(payload), done: h.cfg.Runtime.NewEvent()}
	if err := hw.enqueue(p); err != nil {
		return Reply{}, err
	}
	if h.cfg.Runtime.Wait(ctx, p.done, -1) != rt.Fired {
		// The submitter gave up: the command may still be journaled (its
		// turn may be in flight); a retry with the key answers it.
		return Reply{}, &UnknownOutcomeError{World: w, Key: cmd.Key, Err: ctx.Err()}
	}
	return p.reply, p.err
}

// Handoff hands a world held here to another node: the turns already
// taken are journaled first, then the store appends lease.handed_off{from:
// this node, to, epoch+1} as this holder's last act. Commands still queued
// are answered with a *NotHolderError naming to. The mirror stays warm
// here, so a handback replays only what the other node appended.
func (h *Host) Handoff(ctx context.Context, w, to string) error {
	return h.handoff(ctx, w, to, nil)
}

func (h *Host) handoff(ctx context.Context, w, to string, note []byte) error {
	if err := journal.ValidateID("holder", to); err != nil {
		return err
	}
	h.mu.Lock()
	hw := h.held[w]
	h.mu.Unlock()
	if hw == nil {
		return &NotHolderError{World: w}
	}
	c := &handoffReq{at: h.clock.Now(), to: to, note: note, done: h.cfg.Runtime.NewEvent()}
	hw.mu.Lock()
	if hw.ended {
		err := hw.endErr
		hw.mu.Unlock()
		return err
	}
	hw.ctrl = append(hw.ctrl, c)
	hw.mu.Unlock()
	hw.sig.Notify()
	if h.cfg.Runtime.Wait(ctx, c.done, -1) != rt.Fired {
		return fmt.Errorf("world %s: handoff to %s: %w (it may still land)", w, to, ctx.Err())
	}
	return c.err
}

// retryAfter is the delay an overloaded submitter is asked to wait: the
// time the world's loop needs to drain its inbox at its recent rate.
func (h *Host) retryAfter(hw *hosted) time.Duration {
	return hw.load.drainTime(hw.h.cfg.InboxLimit)
}

// validCommand checks a command's key (required, the key rule) and
// payload (the JSON rule) and returns it with the payload normalized: the
// one check of Host.Submit and Remote.Submit, so a command a remote host
// would refuse is refused here alike, and a key is never sent in a form
// JSON encoding would repair (invalid UTF-8 becomes U+FFFD).
func validCommand(cmd Command) (Command, error) {
	if err := journal.ValidateKey(cmd.Key); err != nil {
		return Command{}, err
	}
	if cmd.Key == "" {
		return Command{}, &journal.InputError{Field: "command key", Problem: "required: a command carries an idempotency key"}
	}
	payload, err := journal.NormalizePayload(cmd.Payload)
	if err != nil {
		return Command{}, err
	}
	cmd.Payload = payload
	return cmd, nil
}
