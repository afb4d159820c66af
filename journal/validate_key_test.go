package journal

import (
	"errors"
	"testing"

	"github.com/leasehold/leasehold/lease"
)

// TestValidateKeyCharacterRule: the key rule refuses C0, DEL, C1 and the
// bidi embeddings, overrides and isolates, and nothing else (issue 17,
// defect 9).
func TestValidateKeyCharacterRule(t *testing.T) {
	t.Parallel()
	refused := []rune{0x00, 0x09, 0x0a, 0x0d, 0x1f, 0x7f}
	for c := rune(0x80); c <= 0x9f; c++ {
		refused = append(refused, c)
	}
	for c := rune(0x202a); c <= 0x202e; c++ {
		refused = append(refused, c)
	}
	for c := rune(0x2066); c <= 0x2069; c++ {
		refused = append(refused, c)
	}
	for _, c := range refused {
		if err := ValidateKey("a" + string(c) + "b"); !errors.Is(err, lease.ErrInvalid) {
			t.Errorf("key with %U: want ErrInvalid, got %v", c, err)
		}
	}
	for _, k := range []string{"", "a b", "é", "e\u0301", "\u00a0", "\u2029x", "\u200d", "\U0001F600", "\u2065", "\u206a", "\u2029"} {
		if err := ValidateKey(k); err != nil {
			t.Errorf("key %q: %v", k, err)
		}
	}
}
