package hostile

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/leasehold/leasehold/journal"
)

// TestValuesAreWhatTheirNamesSay keeps the corpus honest: a value named
// for a limit is exactly at or one past it, and names are unique within
// a kind (the suite keys its outcomes by name).
func TestValuesAreWhatTheirNamesSay(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, s := range Strings() {
		if seen["s/"+s.Name] {
			t.Errorf("string %q twice", s.Name)
		}
		seen["s/"+s.Name] = true
		want := map[string]int{
			"id-at-limit": journal.MaxIDBytes, "id-past-limit": journal.MaxIDBytes + 1,
			"key-at-limit": journal.MaxKeyBytes, "key-past-limit": journal.MaxKeyBytes + 1,
			"key-at-limit-multibyte": journal.MaxKeyBytes, "key-past-limit-multibyte": journal.MaxKeyBytes + 1,
			"reason-at-limit": journal.MaxReasonBytes, "reason-past-limit": journal.MaxReasonBytes + 1,
			"reason-past-limit-multibyte": journal.MaxReasonBytes + 1, "reason-multiline-at-limit": journal.MaxReasonBytes,
		}
		if n, ok := want[s.Name]; ok && len(s.Value) != n {
			t.Errorf("%s is %d bytes, want %d", s.Name, len(s.Value), n)
		}
	}
	for _, p := range Payloads() {
		if seen["j/"+p.Name] {
			t.Errorf("payload %q twice", p.Name)
		}
		seen["j/"+p.Name] = true
		var compact bytes.Buffer
		switch p.Name {
		case "compact-at-limit", "compact-past-limit":
			want := journal.MaxPayloadBytes + map[bool]int{true: 1}[strings.HasSuffix(p.Name, "past-limit")]
			if json.Compact(&compact, p.Value) != nil || compact.Len() != want {
				t.Errorf("%s is %d bytes compact, want %d", p.Name, compact.Len(), want)
			}
		case "raw-at-limit", "raw-past-limit":
			want := journal.MaxPayloadRawBytes + map[bool]int{true: 1}[strings.HasSuffix(p.Name, "past-limit")]
			if len(p.Value) != want {
				t.Errorf("%s is %d bytes, want %d", p.Name, len(p.Value), want)
			}
		case "depth-at-limit", "depth-past-limit":
			want := journal.MaxPayloadDepth + map[bool]int{true: 1}[strings.HasSuffix(p.Name, "past-limit")]
			if got := bytes.Count(p.Value, []byte("[")); got != want {
				t.Errorf("%s nests %d deep, want %d", p.Name, got, want)
			}
		}
	}
	for _, b := range BatchTotals() {
		sum := 0
		for _, p := range BatchPayloads(int(b.Value)) {
			if !json.Valid(p) || len(p) > journal.MaxPayloadBytes {
				t.Fatalf("%s: a payload of %d bytes is not a valid one", b.Name, len(p))
			}
			sum += len(p)
		}
		if sum != int(b.Value) {
			t.Errorf("%s totals %d bytes, want %d", b.Name, sum, b.Value)
		}
	}
}
