package auth_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/lease"
)

// FuzzParseScope: any string is parsed or refused typed, never a panic;
// what is parsed prints back as itself, and allows nothing its action
// does not cover.
func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"admin", "read", "work:queue:emails.*", "read:world:*", "admin:queue:x", "work:queue:a*b", "", ":", "read::"} {
		f.Add(s, "emails.eu")
	}
	f.Fuzz(func(t *testing.T, s, name string) {
		sc, err := auth.ParseScope(s)
		if err != nil {
			require.ErrorIs(t, err, lease.ErrInvalid)
			return
		}
		require.Equal(t, s, sc.String())
		again, err := auth.ParseScope(sc.String())
		require.NoError(t, err)
		require.Equal(t, sc, again)
		if sc.Action == auth.Read {
			require.False(t, sc.Allows(auth.Work, auth.Queue, name))
			require.False(t, sc.Allows(auth.Admin, auth.Token, ""))
		}
		if sc.Kind != auth.Any {
			require.False(t, sc.Allows(auth.Read, auth.Token, ""), "only a bare admin scope manages tokens")
		}
	})
}
