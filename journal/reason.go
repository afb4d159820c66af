package journal

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The one rule for free text the library stores — a run's failure, block,
// cancel and reclaim reasons, a world's revoke reason — on both stores:
//
//   - at most MaxReasonBytes bytes of valid UTF-8;
//   - no NUL (Postgres text cannot hold it) and no other control
//     character but tab, line feed and carriage return: not the rest of
//     C0 (U+0001–U+001F, U+007F), not C1 (U+0080–U+009F), which terminals
//     and log viewers act on;
//   - no bidirectional embedding, override or isolate (U+202A–U+202E,
//     U+2066–U+2069), which make a reason display as something other than
//     what it says (the dashboard and the CLI print reasons).
//
// Text a caller hands in (Cancel, Revoke) is refused with an *InputError
// when it breaks the rule: ValidateReason. Text the library derives from
// what it cannot refuse — a handler's error message, a recovered panic —
// is made to fit instead, visibly: SafeReason escapes what the rule
// refuses and marks a cut, so nothing is silently dropped or replaced.

// MaxReasonBytes bounds a stored reason.
const MaxReasonBytes = 2048

// ValidateReason checks free text against the reason rule.
func ValidateReason(field, r string) error {
	if len(r) > MaxReasonBytes {
		return invalid(field, "%d bytes is over the limit of %d", len(r), MaxReasonBytes)
	}
	for i, c := range r {
		if c == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(r[i:]); size == 1 {
				return invalid(field, "not valid UTF-8 at byte %d", i)
			}
		}
		if refusedInReason(c) {
			return invalid(field, "control character %U at byte %d", c, i)
		}
	}
	return nil
}

// refusedInReason is the rule's character test: that of the key rule
// (controlOrBidi, validate.go) except tab, line feed and carriage return.
func refusedInReason(c rune) bool {
	if c == '\t' || c == '\n' || c == '\r' {
		return false
	}
	return controlOrBidi(c)
}

// SafeReason makes any text a valid reason, visibly: each invalid byte
// becomes \xHH and each refused character \u{HHHH} (so "head \xff tail"
// keeps its tail), and text over MaxReasonBytes is cut at a character
// boundary and ends in a marker naming how much was cut. It is idempotent
// on text that already follows the rule and short enough.
func SafeReason(s string) string {
	if ValidateReason("reason", s) == nil {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case refusedInReason(c):
			fmt.Fprintf(&b, `\u{%04X}`, c)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	out := b.String()
	if len(out) <= MaxReasonBytes {
		return out
	}
	// The marker's length depends on the numbers in it; reserve the
	// longest it can be for this text.
	marker := func(kept int) string { return fmt.Sprintf(" … [cut: %d of %d bytes]", len(out)-kept, len(out)) }
	kept := MaxReasonBytes - len(marker(0))
	for kept > 0 && !utf8.RuneStart(out[kept]) {
		kept--
	}
	return out[:kept] + marker(kept)
}
