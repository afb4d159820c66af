package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestPayloadLimitIsCompact: the 64 KiB limit is on the compact form, so
// whitespace around a small document is accepted up to the stated raw
// bound, and the refusals name the rule they apply (issue 17, defect 11).
func TestPayloadLimitIsCompact(t *testing.T) {
	t.Parallel()
	ws := strings.Repeat(" ", 150_000)
	got, err := NormalizePayload([]byte(ws + "{}" + ws))
	if err != nil || string(got) != "{}" {
		t.Fatalf("300,002 bytes of whitespace around {}: got %q, %v; want {}", got, err)
	}
	pretty := []byte("[" + strings.Repeat(`1,              `, MaxPayloadBytes/2-2) + "1]") // compact: 64 KiB - 1
	if got, err := NormalizePayload(pretty); err != nil || len(got) > MaxPayloadBytes {
		t.Fatalf("pretty JSON whose compact form fits: %d bytes, %v", len(got), err)
	}
	_, err = NormalizePayload([]byte(`"` + strings.Repeat("x", MaxPayloadBytes) + `"`))
	if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "compact") {
		t.Fatalf("compact form over the limit: %v", err)
	}
	_, err = NormalizePayload([]byte(strings.Repeat(" ", MaxPayloadRawBytes) + "{}"))
	if !errors.Is(err, lease.ErrInvalid) || !strings.Contains(err.Error(), "compact") {
		t.Fatalf("raw input over MaxPayloadRawBytes: %v", err)
	}
}

// TestSeenPositionBeyondHeadRefused: a holder cannot have replayed
// positions the journal does not have.
func TestSeenPositionBeyondHeadRefused(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p, err := PlanCreate("w", "home", 30*time.Second, t0)
	if err != nil {
		t.Fatal(err)
	}
	s := p.After
	for _, seen := range []int64{s.Position + 1, math.MaxInt64} {
		r := &AppendRequest{Holder: "home", Epoch: 1, SeenPosition: seen, Kind: "note"}
		if got := CheckAppend(s, t0, r); got != ReasonSeenAhead {
			t.Errorf("seen %d at head %d: reason %q, want %q", seen, s.Position, got, ReasonSeenAhead)
		}
		_, out := PlanAppend(s, t0, []AppendRequest{*r}, func(string) bool { return false })
		var re *RefusedError
		if !errors.As(out[0].Err, &re) || !errors.Is(out[0].Err, lease.ErrInvalid) {
			t.Errorf("seen %d: %v, want a *RefusedError matching ErrInvalid", seen, out[0].Err)
		}
	}
	if got := CheckAppend(s, t0, &AppendRequest{Holder: "home", Epoch: 1, SeenPosition: s.Position, Kind: "note"}); got != "" {
		t.Errorf("seen at the head: %q", got)
	}
}

// TestPayloadDepth: nesting is counted outside strings only, and the bound
// applies at MaxPayloadDepth (issue 17, defect 4).
func TestPayloadDepth(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{`"[[[{"`: 0, `[{"a":"]}\"[["}]`: 2, `[[],[[]]]`: 3, `1`: 0, `{"a":{"b":[1]}}`: 3} {
		if got := jsonDepth([]byte(in)); got != want {
			t.Errorf("jsonDepth(%s) = %d, want %d", in, got, want)
		}
	}
	at := strings.Repeat("[", MaxPayloadDepth) + strings.Repeat("]", MaxPayloadDepth)
	if _, err := NormalizePayload([]byte(at)); err != nil {
		t.Errorf("at the bound: %v", err)
	}
	if _, err := NormalizePayload([]byte("[" + at + "]")); !errors.Is(err, lease.ErrInvalid) {
		t.Errorf("past the bound: %v", err)
	}
}

// FuzzNormalizePayloadFastPath holds the already-compact fast path to the
// compacting one: for any input both accept, the stored form is the same,
// and each refuses what the other refuses.
func FuzzNormalizePayloadFastPath(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a": 1}`, `[1,2,{"b":"x y"}]`, `"\" "`, `{"a":"\\"}`, `nul`, `{"a":1}x`, " 1 ", `"\u2028"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		got, gotErr := NormalizePayload(p)
		var buf bytes.Buffer
		wantErr := json.Compact(&buf, p)
		if gotErr != nil {
			return // refusals for depth, size and UTF-8 are the other tests'
		}
		if wantErr != nil && len(bytes.Trim(p, " \t\r\n")) != 0 {
			t.Fatalf("accepted %q, which json.Compact refuses: %v", p, wantErr)
		}
		if wantErr == nil && !bytes.Equal(got, buf.Bytes()) {
			t.Fatalf("NormalizePayload(%q) = %q, json.Compact gives %q", p, got, buf.Bytes())
		}
		if len(p) > 0 && len(got) > 0 && &got[0] == &p[0] {
			t.Fatalf("the result aliases the input")
		}
	})
}
