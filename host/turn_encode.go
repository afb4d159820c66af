package host

import (
	"encoding/json"

	"github.com/leasehold/leasehold/journal"
)

// appendTurn appends t's entry payload to b, byte for byte what
// json.Marshal(t) makes, without reflection: it runs once per command on
// the world's loop. ok false: t is not one it encodes (effect outcomes,
// or JSON that json.Marshal would rewrite — not compact, or holding a
// byte it escapes or checks: '<', '>', '&', anything past ASCII), and the
// caller uses json.Marshal. Program names and event kinds are identifiers
// (journal.ValidateID: nothing in them to escape), and the hash is
// base64url.
func appendTurn(b []byte, t *turn) (_ []byte, ok bool) {
	if len(t.Effects) > 0 || !plainID(t.Program) || !plainID(t.Hash) || len(t.Reply) > 0 && !plainJSON(t.Reply) {
		return b, false
	}
	b = append(b, `{"p":"`...)
	b = append(b, t.Program...)
	b = append(b, `","h":"`...)
	b = append(b, t.Hash...)
	b = append(b, '"')
	if len(t.Events) > 0 {
		b = append(b, `,"e":[`...)
		for i := range t.Events {
			ev := &t.Events[i]
			if !plainID(ev.Kind) || len(ev.Data) > 0 && !plainJSON(ev.Data) {
				return b, false
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"k":"`...)
			b = append(b, ev.Kind...)
			b = append(b, '"')
			if len(ev.Data) > 0 {
				b = append(b, `,"d":`...)
				b = append(b, ev.Data...)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(t.Reply) > 0 {
		b = append(b, `,"r":`...)
		b = append(b, t.Reply...)
	}
	return append(b, '}'), true
}

// plainID: a string json.Marshal writes between quotes as it is.
func plainID(s string) bool {
	if s == "" {
		return true
	}
	return journal.ValidateID("", s) == nil
}

// plainJSON: raw JSON json.Marshal copies as it is (it compacts a
// json.RawMessage and escapes '<', '>', '&', U+2028 and U+2029 in it).
func plainJSON(r json.RawMessage) bool {
	for _, c := range r {
		if c == '<' || c == '>' || c == '&' || c >= 0x80 {
			return false
		}
	}
	return journal.IsStoredForm(r)
}
