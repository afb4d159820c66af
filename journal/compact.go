package journal

// compactValid reports whether p is already a payload's stored form: one
// JSON value, with no whitespace outside strings, nested at most
// MaxPayloadDepth deep. It is normalizePayload's fast path, one pass over
// p where jsonShape and json.Valid take two (json.Valid's scanner calls a
// function per byte): every payload is normalized several times on its
// way to the store (the holder signs its stored form, the driver's
// validation and the planner check it again), and most of them were
// encoded by json.Marshal and are compact already.
//
// It only ever says yes to what the slow path accepts unchanged (a
// payload it refuses is handed to jsonShape and json.Valid, which decide);
// FuzzCompactValid holds it to that, both ways. UTF-8 is not its concern:
// normalizePayload checks it before.
func compactValid(p []byte) bool {
	var stack [MaxPayloadDepth]byte // the open containers: '{' or '['
	depth, i, n := 0, 0, len(p)
	for {
		// A value starts at i.
		if i >= n {
			return false
		}
		switch c := p[i]; {
		case c == '{' || c == '[':
			if depth == MaxPayloadDepth {
				return false
			}
			stack[depth] = c
			depth++
			i++
			if i < n && (c == '{' && p[i] == '}' || c == '[' && p[i] == ']') {
				depth--
				i++
				break
			}
			if c == '{' {
				if i = objectKey(p, i); i < 0 {
					return false
				}
			}
			continue // the container's first value
		case c == '"':
			if i = stringEnd(p, i); i < 0 {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = numberEnd(p, i); i < 0 {
				return false
			}
		case c == 't':
			if i = literalEnd(p, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = literalEnd(p, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = literalEnd(p, i, "null"); i < 0 {
				return false
			}
		default:
			return false
		}
		// A value ended at i: close containers, or go on to the next
		// element of the innermost one.
		for {
			if depth == 0 {
				return i == n
			}
			if i >= n {
				return false
			}
			c, top := p[i], stack[depth-1]
			if c == '}' && top == '{' || c == ']' && top == '[' {
				depth--
				i++
				continue
			}
			if c != ',' {
				return false
			}
			i++
			if top == '{' {
				if i = objectKey(p, i); i < 0 {
					return false
				}
			}
			break
		}
	}
}

// objectKey scans `"key":` at i and returns the index after the colon, or
// -1.
func objectKey(p []byte, i int) int {
	if i >= len(p) || p[i] != '"' {
		return -1
	}
	if i = stringEnd(p, i); i < 0 || i >= len(p) || p[i] != ':' {
		return -1
	}
	return i + 1
}

// stringEnd scans the string starting at p[i] == '"' and returns the index
// after its closing quote, or -1 (a control character, a bad escape, no
// end).
func stringEnd(p []byte, i int) int {
	for i++; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(p) {
				return -1
			}
			switch p[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(p) {
					return -1
				}
				for _, h := range p[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// numberEnd scans a number at i (RFC 8259 §6: -? int frac? exp?) and
// returns the index after it, or -1.
func numberEnd(p []byte, i int) int {
	n := len(p)
	if p[i] == '-' {
		i++
	}
	switch {
	case i < n && p[i] == '0':
		i++
	case i < n && p[i] >= '1' && p[i] <= '9':
		for i++; i < n && p[i] >= '0' && p[i] <= '9'; i++ {
		}
	default:
		return -1
	}
	if i < n && p[i] == '.' {
		i++
		if i >= n || p[i] < '0' || p[i] > '9' {
			return -1
		}
		for i++; i < n && p[i] >= '0' && p[i] <= '9'; i++ {
		}
	}
	if i < n && (p[i] == 'e' || p[i] == 'E') {
		i++
		if i < n && (p[i] == '+' || p[i] == '-') {
			i++
		}
		if i >= n || p[i] < '0' || p[i] > '9' {
			return -1
		}
		for i++; i < n && p[i] >= '0' && p[i] <= '9'; i++ {
		}
	}
	return i
}

func literalEnd(p []byte, i int, lit string) int {
	if len(p)-i < len(lit) || string(p[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// IsStoredForm reports whether p is a payload in its stored form: what
// NormalizePayload would return unchanged (compact, valid, within the
// depth and size limits; UTF-8 is the caller's to check). An encoder
// that splices JSON it did not build uses it to tell whether the bytes
// can go in as they are.
func IsStoredForm(p []byte) bool { return len(p) <= MaxPayloadBytes && compactValid(p) }
