package host

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/leasehold/leasehold/journal"
)

// parseTurn decodes a turn entry's payload as json.Unmarshal does, without
// reflection, for the payloads appendTurn writes: a replay folds one per
// entry, and a planned handoff's receiver replays the sender's last
// batches while the world's commands wait. ok false: p is not one it
// decodes (not valid UTF-8, not in its stored form, a key other than exactly "p", "h",
// "e" and "r" or one twice, an escape in a string, a null, effect
// outcomes), and the caller uses json.Unmarshal. The raw values are
// copied, as json.RawMessage's UnmarshalJSON copies them.
func parseTurn(p []byte) (t turn, ok bool) {
	if len(p) < 2 || p[0] != '{' || !utf8.Valid(p) || !journal.IsStoredForm(p) { // json.Unmarshal would replace bad UTF-8
		return turn{}, false
	}
	var seen [4]bool
	i := 1
	for i < len(p) && p[i] != '}' {
		if i > 1 {
			if p[i] != ',' {
				return turn{}, false
			}
			i++
		}
		key, j, ok := plainString(p, i)
		if !ok || j >= len(p) || p[j] != ':' {
			return turn{}, false
		}
		i = j + 1
		f := slices.Index([]string{"p", "h", "e", "r"}, key)
		if f < 0 || seen[f] {
			return turn{}, false
		}
		seen[f] = true
		switch f {
		case 0, 1:
			s, j, ok := plainString(p, i)
			if !ok {
				return turn{}, false
			}
			if f == 0 {
				t.Program = s
			} else {
				t.Hash = s
			}
			i = j
		case 2:
			evs, j, ok := parseEvents(p, i)
			if !ok {
				return turn{}, false
			}
			t.Events, i = evs, j
		case 3:
			j := rawEnd(p, i)
			if j < 0 || string(p[i:j]) == "null" {
				return turn{}, false
			}
			t.Reply, i = json.RawMessage(slices.Clone(p[i:j])), j
		}
	}
	return t, i == len(p)-1
}

// parseEvents decodes `[{"k":...,"d":...},...]` at i.
func parseEvents(p []byte, i int) ([]Event, int, bool) {
	if i >= len(p) || p[i] != '[' {
		return nil, 0, false
	}
	i++
	evs := []Event{}
	for i < len(p) && p[i] != ']' {
		if len(evs) > 0 {
			if p[i] != ',' {
				return nil, 0, false
			}
			i++
		}
		if i >= len(p) || p[i] != '{' {
			return nil, 0, false
		}
		i++
		var ev Event
		var seenK, seenD bool
		for i < len(p) && p[i] != '}' {
			if seenK || seenD {
				if p[i] != ',' {
					return nil, 0, false
				}
				i++
			}
			key, j, ok := plainString(p, i)
			if !ok || j >= len(p) || p[j] != ':' {
				return nil, 0, false
			}
			i = j + 1
			switch {
			case key == "k" && !seenK:
				s, j, ok := plainString(p, i)
				if !ok {
					return nil, 0, false
				}
				ev.Kind, i, seenK = s, j, true
			case key == "d" && !seenD:
				j := rawEnd(p, i)
				if j < 0 || string(p[i:j]) == "null" {
					return nil, 0, false
				}
				ev.Data, i, seenD = json.RawMessage(slices.Clone(p[i:j])), j, true
			default:
				return nil, 0, false
			}
		}
		if i >= len(p) {
			return nil, 0, false
		}
		evs = append(evs, ev)
		i++ // '}'
	}
	if i >= len(p) {
		return nil, 0, false
	}
	return evs, i + 1, true
}

// plainString reads a string without escapes at i: its text and the index
// after it.
func plainString(p []byte, i int) (string, int, bool) {
	if i >= len(p) || p[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(p); j++ {
		switch p[j] {
		case '\\':
			return "", 0, false
		case '"':
			return string(p[i+1 : j]), j + 1, true
		}
	}
	return "", 0, false
}

// rawEnd is the index after the value at i of compact, valid JSON, or -1.
func rawEnd(p []byte, i int) int {
	depth := 0
	for ; i < len(p); i++ {
		switch p[i] {
		case '"':
			for i++; i < len(p) && p[i] != '"'; i++ {
				if p[i] == '\\' {
					i++
				}
			}
			if i >= len(p) {
				return -1
			}
		case '{', '[':
			depth++
			continue
		case '}', ']':
			if depth == 0 {
				return i
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
