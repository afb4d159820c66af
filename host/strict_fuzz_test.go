package host

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzStrictString: a JSON string field is either refused or decoded with
// nothing repaired. Whatever strictString accepts, encoding/json accepts
// too and reads the same; the result is valid UTF-8; and every U+FFFD in it
// was sent as one (a literal U+FFFD or a \ufffd escape), never made by the
// decoder out of invalid UTF-8 or an unpaired surrogate escape.
func FuzzStrictString(f *testing.F) {
	for _, s := range []string{`"a"`, `""`, `"\ud800"`, `"\udc00"`, `"\ud83d\ude42"`, `"\ud83d"`, `"\ud83d\u0041"`,
		"\"a\xffb\"", "\"\xed\xa0\x80\"", `"\\ud800"`, `"\ufffd"`, "\"\uFFFD\"", `"\uFFFD\ud800"`, `"\\\ud800"`, `"x\u00e9"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s strictString
		if err := json.Unmarshal(b, &s); err != nil {
			return
		}
		var loose string
		if err := json.Unmarshal(b, &loose); err != nil {
			t.Fatalf("strict accepted %q, encoding/json refused it: %v", b, err)
		}
		if string(s) != loose {
			t.Fatalf("strict read %q as %q, encoding/json as %q", b, s, loose)
		}
		if !utf8.ValidString(string(s)) {
			t.Fatalf("strict accepted %q into invalid UTF-8 %q", b, s)
		}
		sent := strings.Count(string(b), "\ufffd") + strings.Count(strings.ToLower(string(b)), `\ufffd`)
		if got := strings.Count(string(s), "\ufffd"); got > sent {
			t.Fatalf("strict accepted %q with %d U+FFFD made by the decoder (%d sent)", b, got-sent, sent)
		}
	})
}
