package keeper

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold/leasehold/internal/bugs"
	"github.com/leasehold/leasehold/lease"
)

// Ref names one lease: a resource under one fence. A new claim of the same
// resource is a new Ref and a new Entry, never an update of the old one.
type Ref = lease.Ref

// entry states
const (
	live int32 = iota
	gone       // lost, self-stopped, refused by the gate, or released
)

// Entry is one held lease in the keeper. Its methods are safe for
// concurrent use.
type Entry struct {
	k   *Keeper
	ref Ref

	dirty      atomic.Bool  // the wanted expiry advanced since the last flush took it
	state      atomic.Int32 // live or gone
	shadowLost atomic.Bool  // dark mode: the drain found the lease lost; the sync path decides
	finishing  atomic.Bool  // the holder is writing its final outcome (Finishing)
	missing    atomic.Bool  // a drain found the finishing holder's run missing (FinalFailed)

	// The send times (offsets from the keeper's base reading of the
	// monotonic clock) of the last confirmed expiry-setting write on each
	// path: the holder's synchronous renewals and the drain's flushes.
	syncSent, drainSent atomic.Int64

	// gatePasses counts this entry's local gate passes: the entry's own
	// cache line, not a counter every holder of the process contends on.
	// Stats sums it over the live entries; Release adds it to the keeper's.
	gatePasses atomic.Uint64

	cancel context.CancelCauseFunc
	mu     sync.Mutex // guards cause
	cause  error
}

// Ref returns the lease the entry keeps.
func (e *Entry) Ref() Ref { return e.ref }

// Renew advances the wanted expiry: the next drain flushes it. In memory
// only: it never blocks (not even while a flush is stuck) and never
// allocates.
func (e *Entry) Renew() { e.dirty.Store(true) }

// Finishing records that the holder is done and is writing its final
// outcome — a fenced write whose own answer says whether the lease was
// still held. A drain that meets the lease missing from now on does not
// count it lost: the holder's completion itself takes the run out of the
// running set, and a drain whose statement runs just after it (both wait
// on the same rows or, on SQLite, the same write lock) would report every
// such run as a lost lease. The holder reports a final write that failed
// through FinalFailed. Nothing renews a finishing entry (its heartbeat has
// stopped); a renewal still pending is flushed, and harmless: the final
// write is fenced.
func (e *Entry) Finishing() { e.finishing.Store(true) }

// FinalFailed records a finishing holder's final write that did not
// succeed: refused by the store (fenced out, expired, missing) — the lease
// was gone — or with no answer (a timeout, a broken connection), which
// counts as a lost lease when a drain found the run missing meanwhile.
func (e *Entry) FinalFailed(refused bool, err error) {
	if refused || e.missing.Load() {
		e.LoseSync(err)
	}
}

// Live reports whether the lease is still held as far as the keeper knows.
func (e *Entry) Live() bool { return e.state.Load() == live }

// Err returns why the entry is gone, or nil while it is live.
func (e *Entry) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cause
}

// ConfirmSync records a confirmed synchronous renewal (mode sync or dark)
// sent at sent: runway counts from that send.
func (e *Entry) ConfirmSync(sent time.Time) {
	e.k.observeLag(Lag(time.Duration(e.syncSent.Load()), e.k.now()))
	if bugs.RunwayFromAnswer {
		advance(&e.syncSent, e.k.now())
		return
	}
	advance(&e.syncSent, e.k.offset(sent))
}

// Confirm records a confirmed expiry-setting write of this lease made
// outside the drain and sent at sent — a remote holder's synchronous
// renewal made by the server for it — on the path the mode in force
// decides from, as the gate's own flush is (gate.go, confirm). An older
// send never replaces a newer one.
func (e *Entry) Confirm(sent time.Time) { e.confirm(e.k.Mode(), e.k.offset(sent)) }

// Runway returns the runway the entry's mode trusts now — from the send
// of its last confirmed write, less S and any store-clock cut in force
// (0 once gone) — and what the gate may count on: min(runway, D_stop -
// lag), D_stop capped under the cut as the gate caps it.
func (e *Entry) Runway() (runway, available time.Duration) {
	if e.state.Load() != live {
		return 0, 0
	}
	t, sent, now := e.k.timing(), e.sent(e.k.Mode()), e.k.now()
	return Runway(t, sent, now), Available(t, sent, now)
}

// LoseSync records that the store refused a synchronous renewal with err
// (fenced out, expired, missing): the lease is gone whatever the mode.
func (e *Entry) LoseSync(err error) {
	e.giveUp(&LostError{Ref: e.ref, Lag: Lag(e.sent(e.k.Mode()), e.k.now()), Cause: err}, &e.k.stats.lost)
}

// Lag returns the durable lag the entry's mode enforces.
func (e *Entry) Lag() time.Duration { return Lag(e.sent(e.k.Mode()), e.k.now()) }

// sent is the evidence mode m decides from: the holder's synchronous
// renewals in sync and dark, the drain's flushes in writebehind. SetMode
// carries the newest evidence across a switch, so neither path starts a
// mode with a stale send time.
func (e *Entry) sent(m Mode) time.Duration {
	if m == ModeWriteBehind {
		return time.Duration(e.drainSent.Load())
	}
	return time.Duration(e.syncSent.Load())
}

// giveUp marks the entry gone with cause and cancels its holder, once.
// count, when not nil, is the counter of why (lost, self-stops), raised
// before the holder is cancelled: a holder that sees its context end and
// reads the keeper's Stats then finds its own stop counted (a test read
// them in between and saw none, on a loaded machine).
func (e *Entry) giveUp(cause error, count *atomic.Uint64) bool {
	if !e.state.CompareAndSwap(live, gone) {
		return false
	}
	if count != nil {
		count.Add(1)
	}
	e.mu.Lock()
	e.cause = cause
	e.mu.Unlock()
	if e.cancel != nil {
		e.cancel(cause)
	}
	return true
}

// advance raises *a to v unless it already holds a later send: answers
// can arrive out of order, and an older send must not shorten the runway
// a newer one established — nor lengthen it.
func advance(a *atomic.Int64, v time.Duration) {
	for {
		cur := a.Load()
		if int64(v) <= cur || a.CompareAndSwap(cur, int64(v)) {
			return
		}
	}
}
