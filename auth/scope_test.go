package auth_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/lease"
)

func TestScopesAllowWhatTheySay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		scope  string
		action auth.Action
		kind   auth.Kind
		name   string
		want   bool
	}{
		{"admin", auth.Admin, auth.Token, "", true},
		{"admin", auth.Read, auth.World, "w", true},
		{"admin:queue:*", auth.Admin, auth.Token, "", false},
		{"work", auth.Work, auth.Queue, "q", true},
		{"work", auth.Admin, auth.Queue, "q", false},
		{"work", auth.Admin, auth.Token, "", false},
		{"read:queue:emails", auth.Read, auth.Queue, "emails", true},
		{"read:queue:emails", auth.Read, auth.Queue, "emails2", false},
		{"read:queue:emails", auth.Work, auth.Queue, "emails", false},
		{"read:queue:emails", auth.Read, auth.World, "emails", false},
		{"read:queue:emails", auth.Read, auth.Queue, "", false},
		{"work:queue:emails.*", auth.Read, auth.Queue, "emails.eu", true},
		{"work:queue:emails.*", auth.Work, auth.Queue, "emails", false},
		{"work:world:game-*", auth.Work, auth.World, "game-7", true},
		{"work:world:*", auth.Work, auth.World, "", true},
	}
	for _, c := range cases {
		s, err := auth.ParseScope(c.scope)
		require.NoError(t, err, c.scope)
		require.Equal(t, c.scope, s.String())
		require.Equal(t, c.want, s.Allows(c.action, c.kind, c.name), "%s allows %s %s %q", c.scope, c.action, c.kind, c.name)
	}
}

func TestBadScopesAreRefusedTyped(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "root", "read:", "read:queue", "read:table:x", "read:queue:", "read:queue:a*b*",
		"read:queue:*a", "read:queue:a b", "work:queue:x:y", "admin:queue:\xff"} {
		_, err := auth.ParseScope(s)
		require.ErrorIs(t, err, lease.ErrInvalid, "%q", s)
	}
	_, err := auth.ParseScopes(nil)
	require.ErrorIs(t, err, lease.ErrInvalid)
}

func TestSecretsAreFreshAndHashed(t *testing.T) {
	t.Parallel()
	s1, id1, h1, err := auth.NewSecret()
	require.NoError(t, err)
	s2, id2, _, err := auth.NewSecret()
	require.NoError(t, err)
	require.NotEqual(t, s1, s2)
	require.NotEqual(t, id1, id2)
	require.Equal(t, auth.Hash(s1), h1)
	require.Len(t, h1, auth.HashSize)
	got, err := auth.Bearer("Bearer " + s1)
	require.NoError(t, err)
	require.Equal(t, s1, got)
	for _, h := range []string{"", "Bearer", "Basic " + s1, "Bearer nope"} {
		_, err := auth.Bearer(h)
		require.ErrorIs(t, err, auth.ErrUnauthorized, "%q", h)
	}
}
