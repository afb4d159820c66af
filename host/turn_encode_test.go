package host

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendTurn: whenever appendTurn encodes a turn, it writes exactly
// what json.Marshal does (the journal's bytes, hashes and signatures do
// not depend on which encoder ran), and it does encode the common turn.
func FuzzAppendTurn(f *testing.F) {
	f.Add("bank", "h4sh-_", "deposited", []byte(`{"a":"a1","n":1}`), "", []byte(nil), []byte(`{"ok":true,"balance":3}`))
	f.Add("kv", "x", "set", []byte(`{"k":"<b>"}`), "gone", []byte(`null`), []byte(nil))
	f.Add("bank", "x", "a b", []byte(`{"a": 1}`), "é", []byte(`"\u00e9"`), []byte(`[1,2]`))
	f.Add("p", "", "k", []byte(`{"a":"é"}`), "k2", []byte(`{}`), []byte(`"a&b"`))
	f.Fuzz(func(t *testing.T, prog, hash, k1 string, d1 []byte, k2 string, d2, reply []byte) {
		tu := &turn{Program: prog, Hash: hash, Reply: reply}
		for _, ev := range []Event{{k1, d1}, {k2, d2}} {
			if ev.Kind != "" || len(ev.Data) > 0 {
				tu.Events = append(tu.Events, ev)
			}
		}
		want, err := json.Marshal(tu)
		got, ok := appendTurn(nil, tu)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("appendTurn encoded %+v, which json.Marshal refuses: %v", tu, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("appendTurn(%+v) = %s, json.Marshal = %s", tu, got, want)
		}
	})
}

func TestAppendTurnEncodesTheCommonTurn(t *testing.T) {
	tu := &turn{Program: "bank", Hash: commandHash([]byte(`{}`)), Events: []Event{{"deposited", json.RawMessage(`{"a":"a1","n":1}`)}},
		Reply: json.RawMessage(`{"ok":true,"balance":3}`)}
	got, ok := appendTurn(nil, tu)
	want, _ := json.Marshal(tu)
	if !ok || !bytes.Equal(got, want) {
		t.Fatalf("appendTurn = %s, %v; want %s", got, ok, want)
	}
	if n := turnSize(tu); n < len(got) {
		t.Errorf("turnSize = %d, the payload is %d bytes", n, len(got))
	}
	tu.Effects = []EffectOutcome{{Key: "payout"}}
	if _, ok := appendTurn(nil, tu); ok {
		t.Error("appendTurn encoded a turn with effect outcomes (json.Marshal's)")
	}
}
