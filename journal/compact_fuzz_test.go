package journal

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCompactValid holds normalizePayload's one-pass fast path to the
// two-pass rule it stands in for: compactValid says yes exactly when
// json.Valid does, jsonShape finds no whitespace outside strings and the
// nesting is within MaxPayloadDepth. (Saying no too often would only be
// slow; saying yes wrongly would store what the rule refuses.)
func FuzzCompactValid(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":1}`, `{"a":[1,2,{"b":null}],"c":"d"}`, `"x"`, `0`, `-0`, `-0.5e+10`, `1E5`, `01`, `1.`,
		`.5`, `-`, `1e`, `true`, `fals`, `nul`, `null `, ` null`, `{"a" :1}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`,
		`{"a"}`, `{"a":}`, `{1:2}`, `"\u00e9\n\"\\\/\b\f\r\t"`, `"\u00g0"`, `"\u00e"`, `"\x"`, "\"a\tb\"", `"é"`,
		`[1 ,2]`, `[1]]`, `{}}`, `[[[[]]]]`, `{"a":{"b":{"c":[]}}}`, `"`, `"\`, `""`, `[""]`, `{"":""}`,
		strings.Repeat("[", MaxPayloadDepth) + strings.Repeat("]", MaxPayloadDepth),
		strings.Repeat("[", MaxPayloadDepth+1) + strings.Repeat("]", MaxPayloadDepth+1),
		`{"p":"bank","h":"abc","e":[{"k":"deposited","d":{"a":"a1","n":1}}],"r":{"ok":true,"balance":3}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if !utf8.Valid(p) {
			return // normalizePayload refuses it before either path
		}
		d, loose := jsonShape(p)
		want := json.Valid(p) && !loose && d <= MaxPayloadDepth
		if got := compactValid(p); got != want {
			t.Fatalf("compactValid(%q) = %v, the two-pass rule says %v", p, got, want)
		}
	})
}
