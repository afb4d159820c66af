package programs

import (
	"encoding/json"
	"strconv"
)

// decodeBankEvent decodes a bank event as json.Unmarshal does. The shape
// event() writes, {"a":"<account>","n":<amount>} with a plain ASCII
// account (no escape, no control character) and an integer amount, is
// read directly: it is every event a replay folds, one per entry. Any
// other input goes to json.Unmarshal.
func decodeBankEvent(b []byte, e *bankEvent) error {
	if fastBankEvent(b, e) {
		return nil
	}
	*e = bankEvent{}
	return json.Unmarshal(b, e)
}

func fastBankEvent(b []byte, e *bankEvent) bool {
	const pre, mid = `{"a":"`, `","n":`
	if len(b) < len(pre)+len(mid)+2 || string(b[:len(pre)]) != pre || b[len(b)-1] != '}' {
		return false
	}
	i := len(pre)
	for ; i < len(b) && b[i] != '"'; i++ {
		if b[i] < 0x20 || b[i] >= 0x7f || b[i] == '\\' {
			return false
		}
	}
	if len(b)-i < len(mid)+2 || string(b[i:i+len(mid)]) != mid {
		return false
	}
	acct, num := b[len(pre):i], b[i+len(mid):len(b)-1]
	// JSON's integer grammar: -?(0|[1-9][0-9]*); ParseInt alone would
	// also take "+1" and "01".
	d := num
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 1 && d[0] == '0' {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		return false
	}
	e.Account, e.Amount = string(acct), n
	return true
}
