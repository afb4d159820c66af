package world

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/bugs"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// Store is the part of the store of record a Holder uses: the head read,
// the conditional lease change and the fenced append. driver.Driver
// satisfies it; the simulator passes one that routes each call through its
// network.
type Store interface {
	// WorldGet returns the world's head.
	WorldGet(ctx context.Context, p *driver.WorldGetParams) (*driver.World, error)
	// LeaseChange commits one lease change planned against the locked head
	// and the store's clock.
	LeaseChange(ctx context.Context, p *driver.LeaseChangeParams) (*driver.World, error)
	// JournalAppend appends a batch under the append rule, one outcome per
	// request.
	JournalAppend(ctx context.Context, p *driver.JournalAppendParams) ([]journal.AppendOutcome, error)
}

var _ Store = driver.Driver(nil)

// HolderConfig configures a Holder.
type HolderConfig struct {
	// Store is the store of record. Required.
	Store Store
	// Clock is the holder's monotonic clock: runway is measured on it. It
	// is only read (Now); the Holder makes no timer. Defaults to clock.Real.
	Clock clock.Clock
	// World is the world's id. Required.
	World string
	// Name is this holder's identity, the same across restarts. Required.
	Name string
	// Timing is the world lease timing; T_lease is the term asked for and,
	// with S, the runway. Zero fields default to lease.WorldDefaults().
	Timing lease.Timing
	// Key is the node's ed25519 key, whose public half the node registered
	// in the store (driver.NodeKeyStore). When the held epoch's grant
	// carries a key, each Append is one batch signed with Key
	// (journal/sign.go); nil signs nothing.
	Key ed25519.PrivateKey
}

// Entry is one data entry to append; the Holder adds the holder, the epoch
// and the seen position.
type Entry struct {
	Kind    journal.Kind
	Key     string
	Payload []byte
}

// Holder is one process generation's hold on one world's write lease: the
// holder protocol of SPEC §4 (docs/design/fencing.md) over a Store and an
// injected clock. Build a new Holder for every process start: the rules
// that stop a restarted holder from taking over its predecessor's epoch
// rest on the Holder's memory starting empty.
//
//	         Observe: head names me, epoch > max(first look, given)
//	┌──────┐ ───────────────────────────────────────────────▶ ┌─────────┐
//	│ none │                                                  │ adopted │
//	└──────┘ ◀──── Renew fails or is refused; Observe: ─────  └─────────┘
//	  ▲  ▲          the head no longer shows the epoch as mine     │
//	  │  │                                                         │ Renew confirmed
//	  │  │                                                         │ (runway from its send)
//	  │  │  Renew fails or is refused; Append refused for          ▼
//	  │  └─ epoch, holder or expiry; Observe: epoch gone ──── ┌─────────┐
//	  │                                                       │ holding │ ◀─┐ Renew confirmed;
//	  └────── Handoff sent (whatever the answer): given ───── └─────────┘ ──┘ Append
//
// Only in holding, and only while Runway() > 0, does Append send. Why each
// rule is there is written at it: mayAdopt, observe, runway and
// appendRefusal (holder_rules.go), Renew, Handoff and Append below.
//
// A Holder is not safe for concurrent use: one goroutine (a world host's
// loop, or a simulator thread) drives it. It starts no goroutine and makes
// no timer: the caller decides when to read, renew and append.
type Holder struct {
	store  Store
	clock  clock.Clock
	world  string
	me     string
	timing lease.Timing
	s      holderState

	key      ed25519.PrivateKey
	head     int64  // the highest head position this holder has seen: where its next batch should land
	epochKey []byte // the key the held epoch's grant carries (journal.State.HolderKey)
}

// NewHolder returns a Holder holding nothing, that has not yet looked.
func NewHolder(cfg HolderConfig) (*Holder, error) {
	if cfg.Store == nil {
		return nil, fmt.Errorf("world holder: a Store is required: %w", lease.ErrInvalid)
	}
	if err := journal.ValidateID("world", cfg.World); err != nil {
		return nil, err
	}
	if err := journal.ValidateID("holder", cfg.Name); err != nil {
		return nil, err
	}
	t := cfg.Timing.WithDefaults(lease.WorldDefaults())
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	return &Holder{store: cfg.Store, clock: cfg.Clock, world: cfg.World, me: cfg.Name, timing: t, key: cfg.Key}, nil
}

// Name is the holder's identity.
func (h *Holder) Name() string { return h.me }

// Epoch is the epoch held (adopted and not dropped), 0 if none.
func (h *Holder) Epoch() int64 { return h.s.epoch }

// GrantedAt is the position of the entry that started the held epoch, 0 if
// none: a mirror must have replayed through it before the first append.
func (h *Holder) GrantedAt() int64 { return h.s.grantedAt }

// Runway is how long the holder may still act under its epoch, on its own
// clock: zero with no epoch or no renewal confirmed since adoption.
func (h *Holder) Runway() time.Duration { return runway(h.s, h.clock.Now(), h.timing) }

// Read reads the world's head and observes it.
func (h *Holder) Read(ctx context.Context) (w *driver.World, adopted bool, err error) {
	w, err = h.store.WorldGet(ctx, &driver.WorldGetParams{World: h.world})
	if err != nil {
		return nil, false, fmt.Errorf("world %s: %s reading the head: %w", h.world, h.me, err)
	}
	return w, h.Observe(w), nil
}

// Observe folds a head the caller read into the holder's view: the first
// head fixes what this generation may never adopt; a held epoch the head
// no longer shows as this holder's is dropped; an epoch delivered to this
// holder since is adopted. It reports an adoption, after which the caller
// must Renew before the first Append (SPEC §4: the runway starts from that
// renewal's send, not from the grant).
func (h *Holder) Observe(w *driver.World) (adopted bool) {
	h.s, adopted = observe(h.s, h.me, w.State)
	h.sawHead(w)
	return adopted
}

// sawHead records what a head read says about where the next batch lands
// and which key the held epoch's grant carries.
func (h *Holder) sawHead(w *driver.World) {
	h.head = max(h.head, w.Position)
	if h.s.epoch != 0 && w.Epoch == h.s.epoch {
		h.epochKey = w.HolderKey
	}
}

// Created folds the answer of the WorldCreate call this generation made:
// the world's first grant was made to this holder by this generation's own
// act (creating a world that exists fails), so no predecessor can hold its
// epoch and, unlike an epoch current at a first look, it may be adopted.
// It must be the holder's first observation; otherwise it is an ordinary
// Observe. It reports an adoption (renew before the first append).
func (h *Holder) Created(w *driver.World) (adopted bool) {
	if !h.s.looked {
		h.s.looked, h.s.startEpoch = true, w.Epoch-1
	}
	return h.Observe(w)
}

// Renew extends the held epoch's lease synchronously: one conditional
// lease change (journal.PlanRenew) to store time + T_lease. Its send time,
// read before the request leaves, is the runway's new origin once the
// store confirms it — the store set the expiry at some instant after the
// send, so counting from the send can only underestimate the runway.
//
// A renewal that is not confirmed drops the epoch, whatever went wrong: a
// refusal means the lease is gone, and after an error or an unknown outcome
// the holder cannot tell whether its lease is what it believes. Dropping is
// cheap and safe: the next Observe re-adopts the epoch if the head still
// shows it as this holder's, and an adopted epoch needs a confirmed renewal
// before it appends again.
func (h *Holder) Renew(ctx context.Context) error {
	if r := renewRefusal(h.s); r != "" {
		return h.refused("renew", r)
	}
	e, sent := h.s.epoch, h.clock.Now()
	w, err := h.store.LeaseChange(ctx, &driver.LeaseChangeParams{World: h.world, Op: "renew",
		Plan: func(cur *driver.World, now time.Time) (journal.Plan, error) {
			// e, not h.s.epoch: the request is what was sent, whenever it lands.
			return journal.PlanRenew(cur.State, now, h.me, e, h.timing.Lease)
		}})
	if err != nil {
		h.s = dropEpoch(h.s)
		return fmt.Errorf("world %s: %s renewing epoch %d: %w", h.world, h.me, e, err)
	}
	if bugs.HolderRunwayFromAnswer { // planted (-tags simbugs): credits the round trip twice
		sent = h.clock.Now()
	}
	h.s.renewed, h.s.sent, h.s.grantedAt = true, sent, w.GrantedAt
	h.sawHead(w)
	return nil
}

// Confirmed folds a renewal that another component sent for this holder
// and the store confirmed (a world keeper's drain, driver.WorldRenewMany):
// sent is the send time read before that request left, w the head it
// answered. Like a confirmed Renew it moves the runway's origin to sent —
// only forward, and only while w still shows the held epoch as this
// holder's; a drain sent for an epoch this holder has since dropped is
// ignored. It reports whether it was folded.
func (h *Holder) Confirmed(sent time.Time, w *driver.World) bool {
	if h.s.epoch == 0 || w.Epoch != h.s.epoch || w.Holder != h.me {
		return false
	}
	if !h.s.renewed || sent.After(h.s.sent) {
		h.s.renewed, h.s.sent = true, sent
	}
	h.s.grantedAt = w.GrantedAt
	h.sawHead(w)
	return true
}

// Handoff hands the held epoch to another holder: the store appends
// lease.handed_off{from: me, to, epoch+1} (journal.PlanHandoff) as this
// holder's last act under it. The epoch is recorded as given before the
// request is sent and is dropped whatever the outcome: a handoff whose
// answer is lost may still land later, and an append sent meanwhile, or a
// re-adoption of the epoch from a head read before it lands, would write
// under an epoch already promised away.
func (h *Holder) Handoff(ctx context.Context, to string) (*driver.World, error) {
	if r := renewRefusal(h.s); r != "" {
		return nil, h.refused("handoff", r)
	}
	e := h.s.epoch
	h.s.given = max(h.s.given, e)
	w, err := h.store.LeaseChange(ctx, &driver.LeaseChangeParams{World: h.world, Op: "handoff",
		Plan: func(cur *driver.World, now time.Time) (journal.Plan, error) {
			return journal.PlanHandoff(cur.State, now, h.me, to, e, h.timing.Lease)
		}})
	h.s = dropEpoch(h.s)
	if err != nil {
		return nil, fmt.Errorf("world %s: %s handing epoch %d to %s: %w", h.world, h.me, e, to, err)
	}
	return w, nil
}

// Append appends entries under the held epoch, as (holder, epoch,
// seen_position) with seen the position the caller's mirror has replayed
// through. The holder refuses locally (a *HolderError, nothing sent) with
// no epoch, no renewal confirmed since adoption, no runway left, or a
// mirror behind the grant. Otherwise it returns one outcome per entry; an
// entry refused for epoch, holder or expiry means the lease is gone, and
// the epoch is dropped. An error (the batch's outcome unknown or failed)
// keeps the epoch: the runway, counting down from the last confirmed
// renewal, still bounds what the holder believes.
func (h *Holder) Append(ctx context.Context, seen int64, entries ...Entry) ([]journal.AppendOutcome, error) {
	if r := appendRefusal(h.s, h.clock.Now(), h.timing, seen); r != "" {
		return nil, h.refused("append", r)
	}
	e := h.s.epoch
	reqs := make([]journal.AppendRequest, len(entries))
	for i, en := range entries {
		reqs[i] = journal.AppendRequest{Holder: h.me, Epoch: e, SeenPosition: seen, Kind: en.Kind, Key: en.Key, Payload: en.Payload}
	}
	if h.key == nil || h.epochKey == nil {
		return h.send(ctx, reqs)
	}
	// Signed (journal/sign.go): the batch names the positions it lands at.
	// If they moved (an entry landed since this holder saw the head, or a
	// key of the batch was appended already), nothing was written: the
	// holder reads the head, signs what is left again and resends it.
	outs := make([]journal.AppendOutcome, len(reqs))
	left := make([]int, len(reqs))
	for i := range left {
		left[i] = i
	}
	for try := 0; ; try++ {
		// The first try signs reqs itself (sign rewrites every position
		// and signature, so a retry's copy of a request is as good as
		// new); a retry sends a copy of what is left.
		batch := reqs
		if try > 0 {
			batch = make([]journal.AppendRequest, len(left))
			for j, i := range left {
				batch[j] = reqs[i]
			}
		}
		if err := h.sign(batch); err != nil {
			return nil, err
		}
		got, err := h.send(ctx, batch)
		if err != nil {
			return nil, err
		}
		var moved []int
		for j, i := range left {
			outs[i] = got[j]
			var re *journal.RefusedError
			if errors.As(got[j].Err, &re) && re.Reason == journal.ReasonMoved {
				moved = append(moved, i)
			}
		}
		if len(moved) == 0 || try == 2 || h.s.epoch != e {
			return outs, nil
		}
		if _, _, err := h.Read(ctx); err != nil {
			return nil, err
		}
		if h.s.epoch != e {
			return outs, nil
		}
		left = moved
	}
}

// sign names the positions of a batch from the head this holder has seen
// and signs it with the node's key. Payloads are signed in their stored
// form (compact JSON).
func (h *Holder) sign(batch []journal.AppendRequest) error {
	es := make([]journal.Entry, len(batch))
	for i := range batch {
		p, err := journal.NormalizePayloadShared(batch[i].Payload) // batch is this call's copy: no need to copy the bytes too
		if err != nil {
			return err
		}
		r := &batch[i]
		r.Payload, r.Position, r.Signature = p, h.head+1+int64(i), nil
		es[i] = journal.Entry{World: h.world, Position: r.Position, Epoch: r.Epoch, Kind: r.Kind, Holder: r.Holder, Key: r.Key, Payload: r.Payload}
	}
	batch[len(batch)-1].Signature = journal.SignBatch(h.key, es)
	return nil
}

// send is one JournalAppend; the positions written move the head, and a
// refusal for epoch, holder or expiry drops the epoch.
func (h *Holder) send(ctx context.Context, reqs []journal.AppendRequest) ([]journal.AppendOutcome, error) {
	e := h.s.epoch
	outs, err := h.store.JournalAppend(ctx, &driver.JournalAppendParams{World: h.world, Requests: reqs})
	if err != nil {
		return nil, fmt.Errorf("world %s: %s appending %d entries under epoch %d: %w", h.world, h.me, len(reqs), e, err)
	}
	for _, o := range outs {
		if o.Err == nil {
			h.head = max(h.head, o.Position)
		}
		if o.Err != nil && dropsEpoch(o.Err) {
			h.s = dropEpoch(h.s)
		}
	}
	return outs, nil
}

func (h *Holder) refused(op string, r Refusal) error {
	return &HolderError{Op: op, World: h.world, Holder: h.me, Epoch: h.s.epoch, Reason: r}
}
