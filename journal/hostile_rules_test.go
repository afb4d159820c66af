package journal

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestTermIsKeptInWholeMilliseconds (issue 17, found by the hostile-input
// suite): a term finer than a millisecond was journaled as term_ms rounded
// up but kept as a default term cut to microseconds — 1ns read back as 0.
// NormalizeTerm is the one form: whole milliseconds, rounded up, so the
// journal and the head row agree.
func TestTermIsKeptInWholeMilliseconds(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]time.Duration{
		time.Nanosecond:                     time.Millisecond,
		1500 * time.Nanosecond:              time.Millisecond,
		time.Millisecond:                    time.Millisecond,
		time.Millisecond + time.Microsecond: 2 * time.Millisecond,
		MaxTerm:                             MaxTerm,
	} {
		if got := NormalizeTerm(d); got != want {
			t.Errorf("NormalizeTerm(%s) = %s, want %s", d, got, want)
		}
		p, err := PlanCreate("w", "h", d, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.After.Term; got != want {
			t.Errorf("PlanCreate with term %s journals %s, want %s", d, got, want)
		}
	}
}

// TestPayloadOfUnicodeSpaceIsNotEmpty (issue 17, found by the
// hostile-input suite): a payload of a lone U+00A0 or U+0085 — not JSON —
// was taken for an empty one and stored as null. Only JSON's own
// whitespace makes a payload empty.
func TestPayloadOfUnicodeSpaceIsNotEmpty(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"\u00a0", "\u0085", " \u2028 ", "\u3000"} {
		if got, err := NormalizePayload([]byte(p)); !errors.Is(err, lease.ErrInvalid) {
			t.Errorf("NormalizePayload(%q) = %q, %v, want ErrInvalid", p, got, err)
		}
	}
	for _, p := range []string{"", " ", " \t\r\n"} {
		if got, err := NormalizePayload([]byte(p)); err != nil || string(got) != "null" {
			t.Errorf("NormalizePayload(%q) = %q, %v, want null", p, got, err)
		}
	}
}
