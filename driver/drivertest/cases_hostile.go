package drivertest

import (
	"errors"
	"fmt"
	"maps"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/hostile"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// hostileCases drive the hostile corpus (internal/hostile) into every entry
// point of the driver that takes a value of its kind and hold each call to
// SPEC §5's contract, whichever way the rules decide it:
//
//   - refused: the error matches one exported sentinel (hostileSentinels)
//     and no row of the store changed;
//   - accepted: the value reads back byte-identical (JSON: in its compact
//     form), and every world of the store survives export → audit →
//     import into an empty store, entry for entry.
//
// The outcome of every (entry point, value) is returned too, so a test
// holding two stores (crossstore_test.go) can require they agree.
var hostileCases = []Case{
	{"HostileInputContract", func(t *testing.T, f Factory) {
		rep := Hostile(t, f)
		t.Log(rep.Line())
	}},
	{"HostileFingerprintSeesEveryWrite", caseFingerprintSeesEveryWrite},
}

// caseFingerprintSeesEveryWrite keeps "changes-on-refusal=0" from passing
// vacuously: a read leaves the fingerprint as it was, and a write to each
// kind of row — a run, an effect, an event, a world and its journal —
// changes it.
func caseFingerprintSeesEveryWrite(t *testing.T, f Factory) {
	e := newEnv(t, f)
	x := &hx{env: e}
	fp := func() fingerprint {
		s, err := e.fingerprint()
		require.NoError(t, err)
		return s
	}
	writes := []func(){
		func() { e.enqueue(runs.Enqueue{Queue: "q"}) },
		func() { e.claim("q", "a", 1) },
		func() {
			r := x.held("a")
			_, err := e.effects().RunEffectBegin(e.ctx, &driver.RunEffectParams{RunID: r.ID, Fence: r.Fence, Key: "k"})
			require.NoError(t, err)
		},
		func() {
			r := x.held("a")
			_, err := e.effects().RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: []driver.RunEventInsert{{RunID: r.ID, Fence: r.Fence, Seq: 1, Kind: "k"}}})
			require.NoError(t, err)
		},
		func() { e.create("w", "h") },
		func() {
			_, err := e.append1("w", "h", 1, 1, "note", `{}`)
			require.NoError(t, err)
		},
		func() { e.h.Clock.Advance(time.Second); e.handoff("w", "h", "g", 1) },
	}
	for i, write := range writes {
		x.n++
		before := fp()
		_, _ = e.d.WorldGet(e.ctx, &driver.WorldGetParams{World: "w"})
		_, _ = e.d.WorldList(e.ctx, &driver.WorldListParams{})
		_, _ = e.runStore().RunGet(e.ctx, &driver.RunGetParams{ID: 1})
		require.Equal(t, before, fp(), "write %d: a read changed the fingerprint", i)
		write()
		require.NotEqual(t, before, fp(), "write %d is not seen by the fingerprint", i)
	}
}

// hostileSentinels are the exported sentinels a refusal may match, in the
// order an outcome is named by (the first that matches).
var hostileSentinels = []struct {
	name string
	err  error
}{
	{"ErrInvalid", driver.ErrInvalid},
	{"ErrNotFound", driver.ErrNotFound},
	{"ErrConflict", driver.ErrConflict},
	{"ErrFenced", driver.ErrFenced},
	{"ErrNotHolder", driver.ErrNotHolder},
	{"ErrLeaseExpired", driver.ErrLeaseExpired},
	{"ErrSeenBehind", driver.ErrSeenBehind},
	{"ErrLeaseHeld", driver.ErrLeaseHeld},
	{"ErrSchemaTooNew", driver.ErrSchemaTooNew},
	{"ErrCorrupt", driver.ErrCorrupt},
}

// Outcome names the typed outcome of one call: "accepted", the name of
// the first sentinel err matches, or "untyped".
func Outcome(err error) string {
	if err == nil {
		return "accepted"
	}
	for _, s := range hostileSentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return "untyped"
}

// HostileReport is what one store answered to the corpus.
type HostileReport struct {
	Store                 string
	Values, EntryPoints   int // distinct values of the corpus; entry points driven
	Calls                 int // (value, entry point) calls made
	Accepted, Refused     int
	Untyped               int // refusals matching no sentinel
	ChangesOnRefusal      int // refusals after which a row differed
	JournaledRefusals     int // append refusals journaled as append.rejected, as SPEC §4 asks: the only write a refusal may make
	RoundTripFailures     int // accepted values that did not read back, or a world that did not survive export → audit → import
	Outcomes              map[string]string
	acceptedBy, refusedBy map[string]int
}

// Line is the report as one stable log line.
func (r *HostileReport) Line() string {
	return fmt.Sprintf("hostile %s: %d values × %d entry points = %d calls (%d accepted, %d refused), untyped=%d changes-on-refusal=%d roundtrip-failures=%d (journaled append refusals %d)",
		r.Store, r.Values, r.EntryPoints, r.Calls, r.Accepted, r.Refused, r.Untyped, r.ChangesOnRefusal, r.RoundTripFailures, r.JournaledRefusals)
}

// Hostile drives the corpus through every hostile entry point, each on a
// fresh store of f, and fails t on a broken contract. Every entry point
// must both accept and refuse at least one value: one that never accepts
// is wired wrong (every call failing its set-up), and would pass
// vacuously.
//
// The entry points run side by side (each on its own store, its report
// merged into the whole when it ends): one call at a time through a store
// mostly waits on its commits, and on Postgres the corpus took 3½ minutes
// one entry point after another. The group returns when all have ended.
func Hostile(t *testing.T, f Factory) *HostileReport {
	rep := newHostileReport()
	values := map[string]bool{}
	var mu sync.Mutex // guards rep and values while the entry points run
	t.Run("entries", func(t *testing.T) {
		for _, ep := range hostileEntries() {
			rep.EntryPoints++
			t.Run(ep.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, f)
				x := &hx{env: e}
				sub := newHostileReport()
				sub.Store = e.d.Name()
				defer func() {
					mu.Lock()
					defer mu.Unlock()
					rep.merge(sub)
				}()
				for _, v := range ep.values() {
					mu.Lock()
					values[ep.kind+"/"+v.name] = true
					mu.Unlock()
					sub.drive(x, ep, v)
				}
				if ep.roundTrip {
					sub.roundTripWorlds(x)
				}
				require.Positive(t, sub.acceptedBy[ep.name], "%s accepted no value of the corpus: its set-up is broken", ep.name)
				require.Positive(t, sub.refusedBy[ep.name], "%s refused no value of the corpus", ep.name)
			})
		}
	})
	rep.Values = len(values)
	return rep
}

func newHostileReport() *HostileReport {
	return &HostileReport{Outcomes: map[string]string{}, acceptedBy: map[string]int{}, refusedBy: map[string]int{}}
}

// merge adds one entry point's report to the whole.
func (r *HostileReport) merge(sub *HostileReport) {
	r.Store = sub.Store
	r.Calls += sub.Calls
	r.Accepted += sub.Accepted
	r.Refused += sub.Refused
	r.Untyped += sub.Untyped
	r.ChangesOnRefusal += sub.ChangesOnRefusal
	r.JournaledRefusals += sub.JournaledRefusals
	r.RoundTripFailures += sub.RoundTripFailures
	maps.Copy(r.Outcomes, sub.Outcomes)
	for k, n := range sub.acceptedBy {
		r.acceptedBy[k] += n
	}
	for k, n := range sub.refusedBy {
		r.refusedBy[k] += n
	}
}

// drive makes one call and checks the contract.
func (r *HostileReport) drive(x *hx, ep hostileEntry, v hostileValue) {
	t := x.t
	t.Helper()
	x.n++
	call := ep.prepare(x, v.v)
	x.headBefore = 0
	if w, err := x.d.WorldGet(x.ctx, &driver.WorldGetParams{World: x.world()}); err == nil {
		x.headBefore = w.Position
	}
	before, err := x.fingerprint()
	require.NoError(t, err)
	err = call.call()
	r.Calls++
	key := ep.name + "/" + v.name
	out := Outcome(err)
	r.Outcomes[key] = out
	if err == nil {
		r.Accepted++
		r.acceptedBy[ep.name]++
		if call.check != nil {
			if cerr := call.check(); cerr != nil {
				r.RoundTripFailures++
				t.Errorf("%s: accepted, but it does not read back: %v", key, cerr)
			}
		}
		return
	}
	r.Refused++
	r.refusedBy[ep.name]++
	if out == "untyped" {
		r.Untyped++
		t.Errorf("%s: untyped error (matches no exported sentinel): %v", key, err)
	}
	after, ferr := x.fingerprint()
	require.NoError(t, ferr)
	if maps.Equal(before, after) {
		return
	}
	if jerr := x.onlyRejectionJournaled(err, before, after); jerr == nil {
		r.JournaledRefusals++
		return
	} else {
		t.Errorf("%s: refused (%v) but changed tables %v (%v)", key, err, changedTables(before, after), jerr)
	}
	r.ChangesOnRefusal++
}

// onlyRejectionJournaled says whether a refusal's change is the one SPEC §4
// asks for: an append refused for its epoch, holder or expiry is journaled
// as append.rejected (at most once per holder per epoch). Then only the
// journal, its head row and the rejection markers may differ, and every
// entry of the call's world past the head it had is an append.rejected.
func (x *hx) onlyRejectionJournaled(err error, before, after fingerprint) error {
	var re *journal.RefusedError
	if !errors.As(err, &re) || !re.Reason.Journaled() {
		return fmt.Errorf("not a journaled refusal")
	}
	for _, tbl := range changedTables(before, after) {
		switch tbl {
		case "worlds", "journal_entries", "journal_rejections":
		default:
			return fmt.Errorf("table %s changed", tbl)
		}
	}
	es := x.read(re.World)
	for i := len(es) - 1; i >= 0 && es[i].Position > x.headBefore; i-- {
		if es[i].Kind != journal.KindRejected {
			return fmt.Errorf("position %d is %s, not %s", es[i].Position, es[i].Kind, journal.KindRejected)
		}
	}
	return nil
}

// Disagreements lists the (entry point, value) whose outcomes differ
// between two stores' reports.
func Disagreements(a, b *HostileReport) []string {
	var out []string
	for k, x := range a.Outcomes {
		switch y, ok := b.Outcomes[k]; {
		case !ok:
			out = append(out, fmt.Sprintf("%s: only %s has it", k, a.Store))
		case x != y:
			out = append(out, fmt.Sprintf("%s: %s %s, %s %s", k, a.Store, x, b.Store, y))
		}
	}
	for k := range b.Outcomes {
		if _, ok := a.Outcomes[k]; !ok {
			out = append(out, fmt.Sprintf("%s: only %s has it", k, b.Store))
		}
	}
	sort.Strings(out)
	return out
}

// hostileValue is one corpus value of any kind.
type hostileValue struct {
	name string
	v    any
}

func stringValues() []hostileValue {
	var out []hostileValue
	for _, s := range hostile.Strings() {
		out = append(out, hostileValue{s.Name, s.Value})
	}
	return out
}

func jsonValues() []hostileValue {
	var out []hostileValue
	for _, s := range hostile.Payloads() {
		out = append(out, hostileValue{s.Name, s.Value})
	}
	return out
}

func intValues() []hostileValue {
	var out []hostileValue
	for _, s := range hostile.Ints() {
		out = append(out, hostileValue{s.Name, s.Value})
	}
	return out
}

func countValues() []hostileValue {
	var out []hostileValue
	for _, s := range hostile.Counts() {
		out = append(out, hostileValue{s.Name, s.Value})
	}
	return out
}

func durationValues() []hostileValue {
	var out []hostileValue
	for _, s := range hostile.Durations() {
		out = append(out, hostileValue{s.Name, s.Value})
	}
	return out
}

func timeValues() []hostileValue {
	var out []hostileValue
	for _, s := range hostile.Times(StartTime) {
		out = append(out, hostileValue{s.Name, s.Value})
	}
	return out
}
