package host

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/internal/bugs"
	"github.com/leasehold/leasehold/internal/rt"
	"github.com/leasehold/leasehold/internal/world"
	"github.com/leasehold/leasehold/journal"
)

// hosted is one world this host holds: its holder, its mirror and its
// inbox, driven by one loop goroutine (the world.Holder is not safe for
// concurrent use, and one writer per world is the point).
type hosted struct {
	h      *Host
	world  string
	holder *world.Holder
	m      *mirror

	mu      sync.Mutex
	inbox   []*pending
	ctrl    []*handoffReq
	ended   bool  // the loop has stopped taking commands
	endErr  error // what a command submitted after the end gets
	sig     rt.Signal
	stopped rt.Event // fired when the loop returned

	renewedAt   time.Time // send time of the last renewal confirmed (the runway's origin)
	confirmedAt time.Time // send time of the last write or drain that confirmed the lease (the durable lag's origin)

	// The keeper's view (keeper.go), under mu: the epoch to keep (0: none),
	// the send time of the last extension, whether a turn asked for one,
	// and the drains posted for the loop to fold.
	keepEpoch  int64
	extendedAt time.Time
	wantExtend bool
	drained    []drainResult
	load       loadMeter
	home       string    // the world's home, as its head named it at the acquire
	band       bandState // the hot-world band's judgement
	bandAt     time.Time // when the band last judged
	moving     atomic.Bool
}

// pending is one submitted command waiting for its reply.
type pending struct {
	ctx   context.Context
	cmd   Command
	hash  string
	done  rt.Event
	reply Reply
	err   error
}

func (p *pending) finish(r Reply, err error) {
	p.reply, p.err = r, err
	p.done.Fire()
}

type handoffReq struct {
	at   time.Time // when it was asked for (the log's "queued")
	to   string
	note []byte // a host.band entry to journal first, as the holder's last data entry; nil for none
	done rt.Event
	err  error
}

// enqueue queues a command, or refuses it at once: the loop has ended
// (*NotHolderError naming where the world went) or the inbox is full.
func (hw *hosted) enqueue(p *pending) error {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	if hw.ended {
		return hw.endErr
	}
	if len(hw.inbox) >= hw.h.cfg.InboxLimit {
		return &OverloadedError{World: hw.world, Limit: hw.h.cfg.InboxLimit, RetryAfter: hw.h.retryAfter(hw)}
	}
	hw.inbox = append(hw.inbox, p)
	hw.load.queued(len(hw.inbox))
	hw.sig.Notify()
	return nil
}

// end stops taking commands; every queued one and every later submission
// gets err (a retryable *NotHolderError, or ErrClosed).
func (hw *hosted) end(err error) {
	hw.mu.Lock()
	hw.ended, hw.endErr = true, err
	inbox, ctrl := hw.inbox, hw.ctrl
	hw.inbox, hw.ctrl = nil, nil
	hw.mu.Unlock()
	for _, p := range inbox {
		p.finish(Reply{}, err)
	}
	for _, c := range ctrl {
		c.err = err
		c.done.Fire()
	}
}

// loop runs the world's turns until the lease is gone, handed off, or the
// host stops.
func (hw *hosted) loop(ctx context.Context) {
	defer hw.stopped.Fire()
	t := hw.h.cfg.Timing
	keeper := hw.h.renewer != nil
	for {
		wait := max(hw.renewedAt.Add(t.Renew).Sub(hw.h.clock.Now()), 0)
		if keeper { // renewals are the keeper's; wake to stop at D_stop
			wait = max(hw.confirmedAt.Add(t.Stop).Sub(hw.h.clock.Now()), 0)
		}
		if b := hw.h.cfg.Band; b.enabled() {
			wait = min(wait, max(hw.bandAt.Add(b.Window).Sub(hw.h.clock.Now()), 0))
		}
		hw.sig.Wait(ctx, wait)
		if ctx.Err() != nil {
			hw.end(&NotHolderError{World: hw.world}) // the host stopped: nothing queued was applied
			return
		}
		if keeper {
			if !hw.applyDrains(ctx) {
				return
			}
			if lag := hw.h.clock.Now().Sub(hw.confirmedAt); lag >= t.Stop {
				hw.selfStop(lag)
				return
			}
		} else if !hw.h.clock.Now().Before(hw.renewedAt.Add(t.Renew)) {
			if !hw.renew(ctx) {
				return
			}
		}
		if c := hw.takeCtrl(); c != nil {
			if hw.handoff(ctx, c) {
				return
			}
			continue
		}
		if b := hw.h.cfg.Band; b.enabled() && !hw.h.clock.Now().Before(hw.bandAt.Add(b.Window)) {
			if !hw.judgeBand(ctx, b) {
				return
			}
		}
		// Turns are double-buffered (turn_batch.go): the next batch is
		// decided while the last one's append is in the air, and it is
		// sent only after that append landed. Nothing else runs while a
		// batch flies: it lands before the loop renews, hands off or waits.
		var fl *flight
		for {
			batch := hw.take()
			if len(batch) == 0 {
				break
			}
			next, ok := hw.turn(ctx, batch, fl)
			if fl = next; !ok {
				return
			}
			if hw.hasCtrl() {
				hw.sig.Notify() // the handoff goes first, before the next batch
				break
			}
		}
		if fl != nil && !hw.land(ctx, fl) {
			return
		}
		hw.maybeSnapshot(ctx, hw.holder.Epoch(), false) // nothing in the air: the state is the journal's through m.pos
	}
}

func (hw *hosted) take() []*pending {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	n := min(len(hw.inbox), hw.h.cfg.MaxBatch)
	b := make([]*pending, n)
	copy(b, hw.inbox)
	clear(hw.inbox[:n])
	hw.inbox = hw.inbox[n:]
	return b
}

func (hw *hosted) takeCtrl() *handoffReq {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	if len(hw.ctrl) == 0 {
		return nil
	}
	c := hw.ctrl[0]
	hw.ctrl = hw.ctrl[1:]
	return c
}

func (hw *hosted) hasCtrl() bool {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	return len(hw.ctrl) > 0
}

// renew renews synchronously; when that fails it re-reads the head and,
// if the world is still this node's, adopts and renews again. false: the
// world is gone (ended).
func (hw *hosted) renew(ctx context.Context) bool {
	sent := hw.h.clock.Now()
	err := hw.renewOnce(ctx)
	if err == nil {
		hw.renewedAt, hw.confirmedAt = sent, sent
		return true
	}
	hw.h.log.Warn("world renewal failed; re-reading the head", "world", hw.world, "node", hw.h.cfg.Node, "err", err)
	w, adopted, rerr := hw.holder.Read(ctx)
	if rerr == nil && adopted {
		sent = hw.h.clock.Now()
		if err = hw.renewOnce(ctx); err == nil {
			hw.renewedAt, hw.confirmedAt = sent, sent
			return true
		}
	}
	if rerr == nil && w.State.Holder != hw.h.cfg.Node {
		hw.release(&NotHolderError{World: hw.world, Holder: w.State.Holder, Epoch: w.State.Epoch})
		return false
	}
	// The lease could not be confirmed (the store unreachable, or the
	// renewal refused): the holder has dropped the epoch, and the world is
	// let go — before D_stop, the safe side of the self-stop.
	hw.h.selfStops.Add(1)
	if hw.holder.Runway() > 0 {
		hw.renewedAt = hw.h.clock.Now().Add(-hw.h.cfg.Timing.Renew + hw.h.cfg.Timing.Drain) // try again after T_drain
		return true
	}
	hw.release(&NotHolderError{World: hw.world})
	return false
}

// judgeBand reads the last window's load and applies the hot-world band.
// A move runs off the loop: the receiver looks at the world first, then
// this host hands off through its own control path with the transition as
// a host.band note (journaled with its reason and load as the holder's
// last data entry before the handoff), then the receiver acquires.
func (hw *hosted) judgeBand(ctx context.Context, b *Band) bool {
	now := hw.h.clock.Now()
	hw.bandAt = now
	ld := hw.load.read(now)
	if hw.moving.Load() {
		return true
	}
	var mv *bandMove
	hw.band, mv = decideBand(b, hw.band, ld, now, hw.h.cfg.Node, hw.home, hw.home == hw.h.cfg.Node)
	if mv == nil {
		return true
	}
	note, err := json.Marshal(mv)
	if err != nil {
		return true
	}
	if bugs.BandSkipsNote { // planted (-tags simbugs): the move is not journaled before the handoff
		note = nil
	}
	hw.moving.Store(true)
	w, to := hw.world, mv.To
	hw.h.life.Go("band move "+w, func() {
		defer hw.moving.Store(false)
		mctx, cancel := hw.h.cfg.Runtime.WithTimeout(context.Background(), hw.h.cfg.Timing.Lease)
		defer cancel()
		err := b.Mover.PrepareOn(mctx, w, to)
		if err == nil {
			err = hw.h.handoff(mctx, w, to, note)
		}
		if err == nil {
			if mv.State == "spill" {
				hw.h.spills.Add(1)
			} else {
				hw.h.handbacks.Add(1)
			}
			hw.h.log.Info("hot-world band: moved the world", "world", w, "from", hw.h.cfg.Node, "state", mv.State,
				"to", to, "reason", mv.Reason, "turns_per_second", mv.Load.TurnsPerSecond, "inbox_depth", mv.Load.InboxDepth)
			err = b.Mover.AcquireOn(mctx, w, to)
		}
		if err != nil {
			hw.h.log.Warn("hot-world band: the move failed", "world", w, "to", to, "err", err)
		}
	})
	return true
}

// seen is the position an append says the mirror has replayed through.
func (hw *hosted) seen() int64 {
	if bugs.HostSkipsReplay { // planted (-tags simbugs): claims the grant, replayed or not
		return max(hw.m.pos, hw.holder.GrantedAt())
	}
	return hw.m.pos
}

func firstOutcomeErr(outs []journal.AppendOutcome) error {
	if len(outs) > 0 {
		return outs[0].Err
	}
	return nil
}

// renewOnce is one synchronous renewal, bounded by what is left before
// the self-stop: a renewal confirmed later than that could not keep the
// holder going anyway, and a blackholed store must not hold the loop.
func (hw *hosted) renewOnce(ctx context.Context) error {
	left := hw.renewedAt.Add(hw.h.cfg.Timing.Stop).Sub(hw.h.clock.Now())
	ctx, cancel := hw.h.cfg.Runtime.WithTimeout(ctx, max(left, hw.h.cfg.Timing.Drain))
	defer cancel()
	return hw.holder.Renew(ctx)
}

// release ends the loop and drops the world from the host, keeping the
// mirror warm for a later Acquire.
func (hw *hosted) release(err error) {
	hw.stopKeeping()
	hw.end(err)
	hw.h.drop(hw)
}

// stopKeeping takes the world out of the keeper's drains.
func (hw *hosted) stopKeeping() {
	hw.mu.Lock()
	hw.keepEpoch = 0
	hw.mu.Unlock()
}

// selfStop (SPEC §2): the last confirmation of the lease was sent D_stop
// ago; the holder writes nothing more under this epoch, and the world is
// left to expire and be granted elsewhere.
func (hw *hosted) selfStop(lag time.Duration) {
	hw.h.selfStops.Add(1)
	hw.h.log.Warn("world holder stopped itself: durable lag reached D_stop", "world", hw.world,
		"node", hw.h.cfg.Node, "lag", lag, "d_stop", hw.h.cfg.Timing.Stop)
	hw.release(&NotHolderError{World: hw.world})
}

// handoff hands the lease to c.to as this holder's last act: every turn
// taken before it is journaled first, then c.note if any; commands still
// queued go to the new holder with a *NotHolderError naming it. false: a
// note could not be journaled, so the world stays here.
func (hw *hosted) handoff(ctx context.Context, c *handoffReq) bool {
	if c.note != nil {
		actx, cancel := hw.h.cfg.Runtime.WithTimeout(ctx, max(hw.holder.Runway(), hw.h.cfg.Timing.Drain))
		outs, err := hw.holder.Append(actx, hw.seen(), world.Entry{Kind: BandKind, Payload: c.note})
		cancel()
		if err == nil {
			err = firstOutcomeErr(outs)
		}
		if err != nil {
			c.err = fmt.Errorf("world %s: journaling the band transition: %w", hw.world, err)
			c.done.Fire()
			return false
		}
		if !hw.m.dirty {
			hw.m.pos = outs[0].Position
		}
	}
	hw.stopKeeping() // the epoch is about to be given away: no drain may extend it
	started := hw.h.clock.Now()
	w, err := hw.holder.Handoff(ctx, c.to)
	handed := hw.h.clock.Now()
	c.err = err
	// The mirror is the journal's through this holder's last entry: a
	// snapshot of it spares the next node that prepares the world the
	// replay of this holder's term. It is encoded after the release, so
	// the commands waiting here move to the new holder first; the
	// world's slot lock, taken before the release, keeps a Prepare or
	// Acquire of the world on this host from touching the mirror until
	// the encoding is done (neither waits on this loop while holding it).
	var snapSlot *slot
	if err == nil {
		hw.h.mu.Lock()
		snapSlot = hw.h.slots[hw.world]
		hw.h.mu.Unlock()
		if snapSlot != nil && snapSlot.mu.lock(ctx, hw.h.cfg.Runtime) != nil {
			snapSlot = nil
		}
	}
	if err != nil {
		// Handed off or not, the epoch is dropped (it was promised away):
		// read the head to tell submitters where the world is.
		w, _, _ = hw.holder.Read(ctx)
	}
	nh := &NotHolderError{World: hw.world}
	if w != nil {
		nh.Holder, nh.Epoch = w.State.Holder, w.State.Epoch
	}
	hw.release(nh)
	c.done.Fire()
	released := hw.h.clock.Now()
	if snapSlot != nil {
		hw.maybeSnapshot(ctx, w.Epoch, true)
		snapSlot.mu.unlock()
	}
	if err == nil {
		hw.h.log.Info("world handed off", "world", hw.world, "node", hw.h.cfg.Node, "to", c.to, "position", hw.m.pos,
			"queued", started.Sub(c.at), "handoff", handed.Sub(started), "released", released.Sub(handed), "snapshot", hw.h.clock.Now().Sub(released))
	}
	return true
}

// decision is one command decided in a turn batch (with the retries of its
// key in the same batch), on its way to the journal.
type decision struct {
	owners   []*pending
	key      string
	hash     string
	reply    json.RawMessage
	events   []Event
	effects  []EffectRequest
	outcomes []EffectOutcome
	payload  []byte // the turn entry's payload, once encoded
	dropped  bool   // answered without a turn (its effects could not run)
}

func (d *decision) finish(r Reply, err error) {
	for _, p := range d.owners {
		p.finish(r, err)
	}
}

func (hw *hosted) answerFromJournal(ctx context.Context, ps []*pending, hash string, pos int64) {
	_, t, err := readTurn(ctx, hw.h.cfg.Store, hw.world, pos)
	for _, p := range ps {
		switch {
		case err != nil:
			p.finish(Reply{}, &UnknownOutcomeError{World: hw.world, Key: p.cmd.Key, Err: err})
		case t.Hash != hash:
			p.finish(Reply{}, &KeyReusedError{World: hw.world, Key: p.cmd.Key, Position: pos})
		default:
			p.finish(Reply{Position: pos, Payload: t.Reply, Duplicate: true, Effects: t.Effects}, nil)
		}
	}
}

func compactReply(r json.RawMessage) (json.RawMessage, error) {
	if len(r) == 0 {
		return nil, nil
	}
	return journal.NormalizePayload(r)
}
