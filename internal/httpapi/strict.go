package httpapi

import (
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// StrictString is a JSON string field decoded without encoding/json's
// silent repairs: a string holding invalid UTF-8 or an unpaired surrogate
// escape (\ud800) is refused, where json.Unmarshal would turn either into
// U+FFFD — and the key a client sent would not be the key applied.
type StrictString string

// UnmarshalJSON implements json.Unmarshaler.
func (s *StrictString) UnmarshalJSON(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("a string that is not valid UTF-8")
	}
	if unpairedSurrogate(b) {
		return errors.New("a string with an unpaired surrogate escape")
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = StrictString(v)
	return nil
}

// unpairedSurrogate reports whether the JSON text b holds a \uD800–\uDFFF
// escape that is not a high surrogate followed at once by a low one.
func unpairedSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			continue
		}
		if b[i+1] != 'u' {
			i++ // an escaped character: skip it (it may be a backslash)
			continue
		}
		r, ok := hex4(b, i+2)
		switch {
		case !ok:
			return true // not JSON; the decoder refuses it too
		case r >= 0xdc00 && r <= 0xdfff:
			return true
		case r >= 0xd800 && r <= 0xdbff:
			if i+11 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
				return true
			}
			lo, ok := hex4(b, i+8)
			if !ok || lo < 0xdc00 || lo > 0xdfff {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// hex4 reads the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
