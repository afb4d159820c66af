package programs

import (
	"encoding/json"
	"reflect"
	"slices"
)

// strictFlatJSON is strictJSON for a struct whose fields are all scalars
// (no nested struct or map for an unknown field to hide in), given its
// fields' JSON names: the one-pass json.Unmarshal, and a scan of the
// top-level keys, instead of a json.Decoder (a reader, a decoder and a
// copy of the payload per command). Whenever it cannot tell that the
// answer is strictJSON's — Unmarshal failed, or a key is not exactly one
// of names (strictJSON also takes other cases of a name), or is escaped —
// it zeroes v and asks strictJSON, so it accepts, refuses and decodes
// exactly what strictJSON does.
func strictFlatJSON(b []byte, v any, names ...string) error {
	if json.Unmarshal(b, v) == nil && keysAmong(b, names) {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	return strictJSON(b, v)
}

// keysAmong reports whether b, valid JSON, is an object whose every
// top-level key is one of names, written without escapes.
func keysAmong(b []byte, names []string) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	for i++; ; {
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '}':
			return true
		case ',':
			i++
			continue
		case '"':
		default:
			return false
		}
		j := i + 1
		for j < len(b) && b[j] != '"' && b[j] != '\\' {
			j++
		}
		if j >= len(b) || b[j] != '"' || !slices.Contains(names, string(b[i+1:j])) {
			return false
		}
		i = skipSpace(b, j+1)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		if i = skipValue(b, skipSpace(b, i+1)); i < 0 {
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index after the valid JSON value at i, or -1.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return -1
			}
		case '{', '[':
			depth++
			continue
		case '}', ']':
			if depth == 0 {
				return i // the enclosing object's end
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
			continue
		default:
			continue
		}
		if depth == 0 {
			return i + 1
		}
	}
	if depth == 0 {
		return i
	}
	return -1
}
