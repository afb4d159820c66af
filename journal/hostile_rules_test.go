package journal

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// TestTermIsWholeMilliseconds (issue 17, found by the hostile-input suite):
// a term finer than a millisecond was accepted, journaled as term_ms
// rounded up and kept in the head row cut to microseconds — 1ns read back
// as a default term of 0. Such a term is now refused by every plan.
func TestTermIsWholeMilliseconds(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{time.Nanosecond, 1500 * time.Nanosecond, time.Millisecond + time.Microsecond} {
		if err := ValidateTerm(d); !errors.Is(err, lease.ErrInvalid) {
			t.Errorf("ValidateTerm(%s) = %v, want ErrInvalid", d, err)
		}
		if _, err := PlanCreate("w", "h", d, time.Unix(0, 0)); !errors.Is(err, lease.ErrInvalid) {
			t.Errorf("PlanCreate with term %s = %v, want ErrInvalid", d, err)
		}
	}
	for _, d := range []time.Duration{time.Millisecond, 1500 * time.Millisecond, MaxTerm} {
		if err := ValidateTerm(d); err != nil {
			t.Errorf("ValidateTerm(%s) = %v", d, err)
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
