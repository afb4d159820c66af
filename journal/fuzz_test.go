package journal

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/leasehold/leasehold/lease"
)

// FuzzJSONLReader: any input is either read as entries that re-encode to
// exactly the input lines, or refused with a *LineError; never a panic,
// never a silently altered entry.
func FuzzJSONLReader(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	p, _ := PlanCreate("w1", "home", 30e9, t0)
	for i := range p.Entries {
		_ = w.Write(&p.Entries[i])
	}
	_ = w.Close()
	f.Add(buf.Bytes())
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"world":"w","position":-1}` + "\n"))
	f.Add(buf.Bytes()[:buf.Len()-3])
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		var out bytes.Buffer
		w := NewWriter(&out)
		for {
			e, err := r.Next()
			if errors.Is(err, io.EOF) {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out.Bytes(), data) {
					t.Fatalf("accepted input does not round-trip:\n in %q\nout %q", data, out.Bytes())
				}
				return
			}
			if err != nil {
				var le *LineError
				if !errors.As(err, &le) || !errors.Is(err, lease.ErrCorrupt) {
					t.Fatalf("refusal is not a *LineError wrapping ErrCorrupt: %v", err)
				}
				return
			}
			if err := w.Write(e); err != nil {
				t.Fatal(err)
			}
			_ = NewAuditor().Add(e) // must not panic on any parsed entry
		}
	})
}

// FuzzNormalizePayload: a payload is refused with an *InputError or
// normalized to compact, valid JSON within the limit, idempotently.
func FuzzNormalizePayload(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : [1, 2] } `, `"x"`, `{"a":`, "\xff", `null`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		n, err := NormalizePayload(p)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %v", err)
			}
			return
		}
		if len(n) > MaxPayloadBytes {
			t.Fatalf("normalized payload of %d bytes", len(n))
		}
		again, err := NormalizePayload(n)
		if err != nil || !bytes.Equal(again, n) {
			t.Fatalf("not idempotent: %q -> %q (%v)", n, again, err)
		}
	})
}
