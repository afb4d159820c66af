package journal

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

// FuzzValidateInput checks the identifier, kind and key validators against
// independent statements of their rules: each accepts exactly what its doc
// comment promises, and each refusal is an *InputError naming the field and
// matching lease.ErrInvalid.
func FuzzValidateInput(f *testing.F) {
	for _, s := range [][3]string{
		{"w1", "note", ""},
		{"a.b_c:d@e/f-g", "lease.granted", "order-42"},
		{"", "lease.", "tab\there"},
		{"with space", "world.created", "\x7f"},
		{strings.Repeat("x", MaxIDBytes), "append.rejected", strings.Repeat("k", MaxKeyBytes)},
		{strings.Repeat("x", MaxIDBytes+1), "leasegranted", strings.Repeat("k", MaxKeyBytes+1)},
		{"é", "Lease.granted", "é\u2028\u0085"},
		{"\xff", "lease.granted\x00", "\xff"},
	} {
		f.Add(s[0], s[1], s[2], false)
		f.Add(s[0], s[1], s[2], true)
	}
	f.Fuzz(func(t *testing.T, id, kind, key string, system bool) {
		refused := func(err error, field string) {
			t.Helper()
			var ie *InputError
			require.True(t, errors.As(err, &ie), "not an *InputError: %v", err)
			require.Equal(t, field, ie.Field)
			require.ErrorIs(t, err, lease.ErrInvalid)
		}

		err := ValidateID("holder", id)
		require.Equal(t, idRule(id), err == nil, "ValidateID(%q) = %v", id, err)
		if err != nil {
			refused(err, "holder")
		}

		err = ValidateKind(Kind(kind), system)
		want := idRule(kind) && len(kind) <= MaxKindBytes && (!reserved(kind) || system && Kind(kind).IsSystem())
		require.Equal(t, want, err == nil, "ValidateKind(%q, %v) = %v", kind, system, err)
		if err != nil {
			refused(err, "kind")
		}
		if err == nil && !system {
			require.False(t, Kind(kind).IsSystem(), "a holder may not append a system kind")
		}

		err = ValidateKey(key)
		require.Equal(t, keyRule(key), err == nil, "ValidateKey(%q) = %v", key, err)
		if err != nil {
			refused(err, "key")
		}
	})
}

// idRule: 1..MaxIDBytes bytes of [A-Za-z0-9._:@/-].
func idRule(s string) bool {
	if len(s) == 0 || len(s) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("._:@/-", c) >= 0) {
			return false
		}
	}
	return true
}

// keyRule: at most MaxKeyBytes of valid UTF-8 without a control character
// (unicode.IsControl: C0, DEL and C1) or a bidi embedding, override or
// isolate (U+202A–U+202E, U+2066–U+2069).
func keyRule(s string) bool {
	if len(s) > MaxKeyBytes || !utf8.ValidString(s) {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || strings.ContainsRune("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", r)
	})
}

func reserved(k string) bool {
	return strings.HasPrefix(k, "lease.") || strings.HasPrefix(k, "append.") || strings.HasPrefix(k, "world.")
}
