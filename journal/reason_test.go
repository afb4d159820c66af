package journal

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

// TestReasonRule is the rule's matrix: what ValidateReason refuses and
// what SafeReason makes of it (issue 17, defects 7–9).
func TestReasonRule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, safe string
		ok       bool
	}{
		{"plain", "plain", true},
		{"multi\nline\ttab\r", "multi\nline\ttab\r", true},
		{"ünïcödé 日本", "ünïcödé 日本", true},
		{"head \xff tail-that-matters", `head \xff tail-that-matters`, false},
		{"nul\x00byte", `nul\u{0000}byte`, false},
		{"esc\x1b[31mred", `esc\u{001B}[31mred`, false},
		{"del\x7f", `del\u{007F}`, false},
		{"c1 \u0085 next line", `c1 \u{0085} next line`, false},
		{"bidi \u202e evil", `bidi \u{202E} evil`, false},
		{"isolate \u2066x\u2069", `isolate \u{2066}x\u{2069}`, false},
	} {
		err := ValidateReason("reason", c.in)
		if c.ok {
			require.NoError(t, err, "%q", c.in)
		} else {
			require.ErrorIs(t, err, lease.ErrInvalid, "%q", c.in)
		}
		require.Equal(t, c.safe, SafeReason(c.in), "%q", c.in)
		require.NoError(t, ValidateReason("reason", SafeReason(c.in)))
	}

	long := strings.Repeat("é", MaxReasonBytes) // 2 bytes each: twice the limit
	require.Error(t, ValidateReason("reason", long))
	cut := SafeReason(long)
	require.NoError(t, ValidateReason("reason", cut))
	require.LessOrEqual(t, len(cut), MaxReasonBytes)
	require.True(t, strings.HasSuffix(cut, " bytes]"), cut[len(cut)-40:])
	require.Contains(t, cut, "[cut: ")
	require.True(t, utf8.ValidString(cut))
}

// FuzzSafeReason: any text becomes a valid reason within the limit;
// valid short text is left as it is; nothing panics.
func FuzzSafeReason(f *testing.F) {
	for _, s := range []string{"", "ok", "head \xff tail", "\x00", "\u202e", strings.Repeat("\xff", 1000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := SafeReason(s)
		require.NoError(t, ValidateReason("reason", out))
		if ValidateReason("reason", s) == nil {
			require.Equal(t, s, out)
		}
		require.Equal(t, out, SafeReason(out), "idempotent")
	})
}
