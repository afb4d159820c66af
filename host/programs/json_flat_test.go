package programs

import (
	"testing"
)

// FuzzStrictFlatJSON: strictFlatJSON accepts, refuses and decodes a bank
// command exactly as strictJSON does, error text included.
func FuzzStrictFlatJSON(f *testing.F) {
	for _, s := range []string{
		`{"op":"deposit","account":"a1","amount":1}`, `{"op":"transfer","from":"a","to":"b","amount":2}`,
		` { "op" : "balance" , "account" : "a" } `, `{"OP":"deposit"}`, `{"op":"deposit","extra":1}`,
		`{"op":"deposit"} ]`, `{"op":"deposit"}{}`, `null`, `[]`, `{"op":{"x":1}}`, `{"\u006fp":"deposit"}`,
		`{"op":"a\"b","account":"c,d}"}`, `{"amount":1e3}`, `{"amount":"1"}`, `{}`, ``, `{"op":"deposit","op":"withdraw"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast, slow bankCmd
		ef := strictFlatJSON(b, &fast, "op", "account", "from", "to", "amount")
		es := strictJSON(b, &slow)
		if (ef == nil) != (es == nil) || ef != nil && ef.Error() != es.Error() {
			t.Fatalf("%q: strictFlatJSON %v, strictJSON %v", b, ef, es)
		}
		if ef == nil && fast != slow {
			t.Fatalf("%q: strictFlatJSON %+v, strictJSON %+v", b, fast, slow)
		}
	})
}
