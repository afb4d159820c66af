package host

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzParseTurn: whenever parseTurn decodes a payload, json.Unmarshal
// decodes it too, to the same turn; and it does decode what appendTurn
// writes.
func FuzzParseTurn(f *testing.F) {
	for _, s := range []string{
		`{"p":"bank","h":"abc","e":[{"k":"deposited","d":{"a":"a1","n":1}}],"r":{"ok":true,"balance":3}}`,
		`{"p":"bank","h":"abc"}`, `{"p":"bank","h":"abc","e":[]}`, `{"p":"bank","h":"abc","e":[{"k":"x"},{"d":[1,"]"]}]}`,
		`{"p":"b\"x","h":"a"}`, `{"P":"bank"}`, `{"p":"a","p":"b"}`, `{"p":"a","x":[{"k":"payout"}]}`, `{"p":1}`,
		`{"p":"a","r":null}`, `{"p":"a","e":null}`, `{"p":"a","e":[{"k":"x","d":null}]}`, `{"p":"a","r":"}"}`, `{}`, `[]`,
		`{"p":"a","e":[{"k":"x","k":"y"}]}`, `{"p":"a","e":[{"k":"x","z":1}]}`, `{"p":"a","r":{"x":{"y":[]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		got, ok := parseTurn(p)
		if !ok {
			return
		}
		var want turn
		if err := json.Unmarshal(p, &want); err != nil {
			t.Fatalf("parseTurn decoded %q, which json.Unmarshal refuses: %v", p, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: parseTurn %#v, json.Unmarshal %#v", p, got, want)
		}
	})
}

func TestParseTurnDecodesWhatAppendTurnWrites(t *testing.T) {
	for _, tu := range []*turn{
		{Program: "bank", Hash: commandHash([]byte(`{}`)), Events: []Event{{"deposited", json.RawMessage(`{"a":"a1","n":1}`)}},
			Reply: json.RawMessage(`{"ok":true,"balance":3}`)},
		{Program: "bank", Hash: "h", Reply: json.RawMessage(`{"ok":false,"balance":0,"error":"insufficient funds"}`)},
		{Program: "kv", Hash: "h", Events: []Event{{"set", json.RawMessage(`{"k":"a","v":[1,{"b":"]"}]}`)}, {"gone", nil}}},
	} {
		b, ok := appendTurn(nil, tu)
		if !ok {
			t.Fatalf("appendTurn(%+v) did not encode", tu)
		}
		got, ok := parseTurn(b)
		if !ok || !reflect.DeepEqual(&got, tu) {
			t.Fatalf("parseTurn(%s) = %#v, %v; want %#v", b, got, ok, tu)
		}
	}
}
