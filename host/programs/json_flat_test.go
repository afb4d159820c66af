package programs

import (
	"encoding/json"
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

// FuzzDecodeBankEvent: decodeBankEvent decodes and refuses exactly as
// json.Unmarshal does.
func FuzzDecodeBankEvent(f *testing.F) {
	for _, s := range []string{`{"a":"a1","n":1}`, `{"a":"a1","n":-3}`, `{"a":"a\"1","n":1}`, `{"a":"é","n":1}`,
		`{"a":"a","n":01}`, `{"a":"a","n":+1}`, `{"a":"a","n":1e3}`, `{"a":"a","n":99999999999999999999}`, `{"n":1,"a":"a"}`,
		`{"a":"a","n":1,"x":2}`, `{"a":"","n":0}`, `{"a":"a","n":-}`, `{"a":"a","n":-0}`, `null`, `{"a":"a\u0001","n":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast, slow bankEvent
		ef := decodeBankEvent(b, &fast)
		es := json.Unmarshal(b, &slow)
		if (ef == nil) != (es == nil) || ef != nil && ef.Error() != es.Error() {
			t.Fatalf("%q: decodeBankEvent %v, json.Unmarshal %v", b, ef, es)
		}
		if ef == nil && fast != slow {
			t.Fatalf("%q: decodeBankEvent %+v, json.Unmarshal %+v", b, fast, slow)
		}
	})
}
