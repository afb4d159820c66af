package difftest

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/driver/drivertest"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// side is one store as one sequence sees it. Run ids are the store's own
// (Postgres identities never go back, a SQLite rowid may), so every id is
// compared as its slot: the order in which the sequence first saw it.
type side struct {
	*store
	ids  []int64
	slot map[int64]int
	// claimed are the slots the latest claims returned, latest first: the
	// runs a fenced op is most worth aiming at.
	claimed []int
}

// maxClaimed bounds side.claimed.
const maxClaimed = 4

// noteClaimed puts the slots of a claim's runs first in sd.claimed.
func (sd *side) noteClaimed(rs []*driver.Run) {
	for _, r := range rs {
		s := sd.slotOf(r.ID)
		sd.claimed = append([]int{s}, slices.DeleteFunc(sd.claimed, func(c int) bool { return c == s })...)
	}
	sd.claimed = sd.claimed[:min(len(sd.claimed), maxClaimed)]
}

func newSide(s *store) *side { return &side{store: s, slot: map[int64]int{}} }

// Hostile run references: slots below zero name ids no run has.
var hostileIDs = []int64{0, -1, 1 << 50, 9223372036854775807}

// id maps a slot to this store's id; a slot past the known runs, or a
// negative one, is an id no run has (or an invalid one).
func (sd *side) id(slot int) int64 {
	if slot >= 0 && slot < len(sd.ids) {
		return sd.ids[slot]
	}
	if slot < 0 {
		return hostileIDs[(-slot-1)%len(hostileIDs)]
	}
	return 1 << 50
}

// slotOf maps a store id to its slot, giving a new id the next one.
func (sd *side) slotOf(id int64) int {
	if s, ok := sd.slot[id]; ok {
		return s
	}
	sd.slot[id] = len(sd.ids)
	sd.ids = append(sd.ids, id)
	return len(sd.ids) - 1
}

// name prints a store id as its slot, or, for an id the sequence never
// saw (a hostile one), as itself: it does not assign a slot, so only an
// enqueue (slotOf) decides the slots.
func (sd *side) name(id int64) string {
	if s, ok := sd.slot[id]; ok {
		return fmt.Sprintf("#%d", s)
	}
	return fmt.Sprintf("id(%d)", id)
}

// errFn is the error a RunTx function returns on purpose.
var errFn = errors.New("difftest: fn failed")

// sentinels are the exported sentinels an outcome is classified by, in a
// fixed order; an error may match several (ErrInvalidTiming is also
// ErrInvalid).
var sentinels = []struct {
	name string
	err  error
}{
	{"NotFound", lease.ErrNotFound}, {"Conflict", lease.ErrConflict}, {"Invalid", lease.ErrInvalid},
	{"InvalidTiming", lease.ErrInvalidTiming}, {"Fenced", lease.ErrFenced}, {"NotHolder", lease.ErrNotHolder},
	{"LeaseExpired", lease.ErrLeaseExpired}, {"SeenBehind", lease.ErrSeenBehind}, {"LeaseHeld", lease.ErrLeaseHeld},
	{"Corrupt", lease.ErrCorrupt}, {"SchemaTooNew", lease.ErrSchemaTooNew}, {"fn", errFn},
}

// unmatched marks an outcome whose error matches no sentinel: a failure
// on its own, whatever the other store said (every error the library
// returns unwraps to a sentinel).
const unmatched = "UNMATCHED"

// errOutcome is an error's typed outcome: the sentinels it matches and the
// fields of the typed error it is, never the driver's message text.
func (sd *side) errOutcome(err error) string {
	if err == nil {
		return "ok"
	}
	var names []string
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			names = append(names, s.name)
		}
	}
	if len(names) == 0 {
		return fmt.Sprintf("%s(%v)", unmatched, err)
	}
	out := "err[" + strings.Join(names, ",") + "]"
	var fe *driver.RunFencedError
	var re *journal.RefusedError
	var ie *journal.InputError
	var ve *journal.Violation
	switch {
	case errors.As(err, &fe):
		out += fmt.Sprintf(" fenced{op=%s run=%s fence=%d cur=%d state=%s expired=%t owner=%t}",
			fe.Op, sd.name(fe.ID), fe.Fence, fe.CurrentFence, fe.State, fe.Expired, fe.OwnerMismatch)
	case errors.As(err, &re):
		out += fmt.Sprintf(" refused{%+v}", *re)
	case errors.As(err, &ie):
		out += fmt.Sprintf(" input{%s: %s}", ie.Field, ie.Problem)
	case errors.As(err, &ve):
		out += fmt.Sprintf(" violation{pos=%d rule=%s}", ve.Position, ve.Rule)
	}
	return out
}

// at is a store time as its offset from the clock's start (zero stays
// zero), so both stores' times print alike whatever their location.
func at(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Sub(drivertest.StartTime).String()
}

func bs(b []byte) string {
	if b == nil {
		return "nil"
	}
	if len(b) > 80 {
		return fmt.Sprintf("%q…(%d bytes, %x)", b[:40], len(b), b[len(b)-8:])
	}
	return fmt.Sprintf("%q", b)
}

func (sd *side) run(r *driver.Run) string {
	if r == nil {
		return "run(nil)"
	}
	return fmt.Sprintf("run{%s %s %s prio=%d %s att=%d/%d fence=%d owner=%q sched=%s exp=%s key=%q reason=%q result=%s created=%s finished=%s}",
		sd.name(r.ID), r.Queue, bs(r.Payload), r.Priority, r.State, r.Attempt, r.MaxAttempts, r.Fence, r.Owner,
		at(r.ScheduledAt), at(r.ExpiresAt), r.UniqueKey, r.Reason, bs(r.Result), at(r.CreatedAt), at(r.FinishedAt))
}

func (sd *side) effect(e *driver.Effect) string {
	if e == nil {
		return "effect(nil)"
	}
	return fmt.Sprintf("effect{%s %q fence=%d committed=%t result=%s created=%s committedAt=%s outcome=%q}",
		sd.name(e.RunID), e.Key, e.Fence, e.Committed, bs(e.Result), at(e.CreatedAt), at(e.CommittedAt), e.Outcome)
}

func (sd *side) event(e *driver.RunEvent) string {
	return fmt.Sprintf("event{%s fence=%d seq=%d %q %s created=%s}", sd.name(e.RunID), e.Fence, e.Seq, e.Kind, bs(e.Payload), at(e.CreatedAt))
}

func world(w *driver.World) string {
	if w == nil {
		return "world(nil)"
	}
	s := w.State
	return fmt.Sprintf("world{%q pos=%d hash=%s last=%s epoch=%d holder=%q term=%s exp=%s granted=%d home=%q default=%s created=%s}",
		s.World, s.Position, short(s.LastHash), at(s.LastTime), s.Epoch, s.Holder, s.Term, at(s.ExpiresAt), s.GrantedAt,
		w.Home, w.DefaultTerm, at(w.CreatedAt))
}

func entry(e *journal.Entry) string {
	return fmt.Sprintf("entry{%q %d e=%d %s %q key=%q %s t=%s prev=%s hash=%s sig=%s}",
		e.World, e.Position, e.Epoch, e.Kind, e.Holder, e.Key, bs(e.Payload), at(e.StoreTime), short(e.PrevHash), short(e.Hash), short(e.Signature))
}

func short(h []byte) string {
	if len(h) == 0 {
		return "-"
	}
	return hex.EncodeToString(h)[:min(16, 2*len(h))]
}

func appendOutcomes(out []journal.AppendOutcome, sd *side) string {
	parts := make([]string, len(out))
	for i, o := range out {
		parts[i] = fmt.Sprintf("%d:%s", o.Position, sd.errOutcome(o.Err))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func list[T any](xs []T, f func(T) string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = f(x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// result joins an operation's value and error outcome.
func (sd *side) result(v string, err error) string {
	if err != nil {
		return sd.errOutcome(err)
	}
	return "ok " + v
}
