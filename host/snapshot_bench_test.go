package host

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// ledger is a minimal Snapshotter state for the benchmark (host/programs
// imports this package, so its Bank cannot be used here).
type ledger struct{ Balances map[string]int64 }

func (l *ledger) Decide(Command) (Decision, error) { return Decision{}, nil }
func (l *ledger) Apply(Event) error                { return nil }
func (l *ledger) Snapshot() ([]byte, error)        { return json.Marshal(l) }
func (l *ledger) Restore(b []byte) error           { return json.Unmarshal(b, l) }

type ledgerProgram struct{}

func (ledgerProgram) Name() string { return "ledger" }
func (ledgerProgram) New() State   { return &ledger{Balances: map[string]int64{}} }

// BenchmarkSnapshotEncode: what one snapshot costs — on the world's loop
// (the program's encoding of a 16-account state and the copy of the
// newest 4,096 of 10,000 remembered replies, bank-sized) and off it (the
// marshal the put makes). B/op and allocs/op are the load-independent
// figures; at SnapshotEvery 10,000 and 20,000 commands/s a world takes
// two a second.
func BenchmarkSnapshotEncode(b *testing.B) {
	m := newMirror("w", ledgerProgram{}, time.Hour, 1_000_000, mirrorSnaps{})
	st := m.state.(*ledger)
	for i := range 16 {
		st.Balances[fmt.Sprintf("a%d", i)] = int64(1000 + i)
	}
	now := time.Unix(0, 0)
	for i := range 10_000 {
		m.remember(fmt.Sprintf("c%d", i), keyRecord{hash: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			reply: json.RawMessage(`{"ok":true,"balance":1234}`), pos: int64(i + 2)}, now)
	}
	m.pos = 10_001
	b.Run("on-loop", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok, err := m.encodeSnapshot(); err != nil || !ok {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("marshal-off-loop", func(b *testing.B) {
		body, _, _, _ := m.encodeSnapshot()
		var size int
		b.ReportAllocs()
		for b.Loop() {
			out, err := json.Marshal(body)
			if err != nil {
				b.Fatal(err)
			}
			size = len(out)
		}
		b.ReportMetric(float64(size), "bytes/snapshot")
	})
}
