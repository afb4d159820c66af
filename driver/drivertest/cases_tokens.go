package drivertest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/lease"
)

// The API's bearer tokens (driver.TokenStore): stored by hash, found by
// hash, listed, revoked once; bad input refused typed with nothing
// stored.

func init() {
	edgeCases = append(edgeCases, tokenCases...)
}

var tokenCases = []Case{
	{"TokenCreateGetListRevoke", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		secret, id, hash, err := auth.NewSecret()
		require.NoError(t, err)
		tok, err := e.d.TokenCreate(e.ctx, &driver.TokenCreateParams{ID: id, Name: "ci runner", Hash: hash,
			Scopes: []string{"work:queue:emails.*", "read"}})
		require.NoError(t, err)
		require.Equal(t, StartTime, tok.CreatedAt, "created on the store clock")
		require.False(t, tok.Revoked())

		got, err := e.d.TokenGet(e.ctx, &driver.TokenGetParams{Hash: auth.Hash(secret)})
		require.NoError(t, err)
		require.Equal(t, tok, got)
		_, err = e.d.TokenGet(e.ctx, &driver.TokenGetParams{Hash: auth.Hash(secret + "x")})
		require.ErrorIs(t, err, lease.ErrNotFound)

		_, err = e.d.TokenCreate(e.ctx, &driver.TokenCreateParams{ID: id, Name: "again", Hash: auth.Hash("other"), Scopes: []string{"read"}})
		require.ErrorIs(t, err, lease.ErrConflict, "the id is taken")
		_, err = e.d.TokenCreate(e.ctx, &driver.TokenCreateParams{ID: "tok-other", Name: "again", Hash: hash, Scopes: []string{"read"}})
		require.ErrorIs(t, err, lease.ErrConflict, "the hash is taken")

		e.h.Clock.Advance(time.Second)
		_, _, hash2, err := auth.NewSecret()
		require.NoError(t, err)
		tok2, err := e.d.TokenCreate(e.ctx, &driver.TokenCreateParams{ID: "tok-2", Hash: hash2, Scopes: []string{"admin"}})
		require.NoError(t, err)
		all, err := e.d.TokenList(e.ctx, &driver.TokenListParams{})
		require.NoError(t, err)
		require.Equal(t, []*driver.Token{tok, tok2}, all, "by creation")

		e.h.Clock.Advance(time.Second)
		rev, err := e.d.TokenRevoke(e.ctx, &driver.TokenRevokeParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, StartTime.Add(2*time.Second), rev.RevokedAt)
		e.h.Clock.Advance(time.Second)
		again, err := e.d.TokenRevoke(e.ctx, &driver.TokenRevokeParams{ID: id})
		require.NoError(t, err)
		require.Equal(t, rev.RevokedAt, again.RevokedAt, "the first revocation's time is kept")
		got, err = e.d.TokenGet(e.ctx, &driver.TokenGetParams{Hash: hash})
		require.NoError(t, err)
		require.True(t, got.Revoked(), "a revoked token is still found, marked")
		_, err = e.d.TokenRevoke(e.ctx, &driver.TokenRevokeParams{ID: "tok-none"})
		require.ErrorIs(t, err, lease.ErrNotFound)
	}},
	{"TokenBadInputIsRefusedTyped", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		_, id, hash, err := auth.NewSecret()
		require.NoError(t, err)
		for name, p := range map[string]*driver.TokenCreateParams{
			"no id":         {Hash: hash, Scopes: []string{"read"}},
			"bad id":        {ID: "a b", Hash: hash, Scopes: []string{"read"}},
			"short hash":    {ID: id, Hash: hash[:5], Scopes: []string{"read"}},
			"no scopes":     {ID: id, Hash: hash},
			"bad scope":     {ID: id, Hash: hash, Scopes: []string{"root"}},
			"spaced scope":  {ID: id, Hash: hash, Scopes: []string{"read:queue:a b"}},
			"control name":  {ID: id, Name: "a\x00b", Hash: hash, Scopes: []string{"read"}},
			"invalid utf-8": {ID: id, Name: "a\xffb", Hash: hash, Scopes: []string{"read"}},
			"too many":      {ID: id, Hash: hash, Scopes: make([]string, auth.MaxScopes+1)},
			"long name":     {ID: id, Name: strings.Repeat("n", driver.MaxTokenNameBytes+1), Hash: hash, Scopes: []string{"read"}},
		} {
			_, err := e.d.TokenCreate(e.ctx, p)
			require.ErrorIs(t, err, lease.ErrInvalid, name)
		}
		_, err = e.d.TokenGet(e.ctx, &driver.TokenGetParams{Hash: []byte("short")})
		require.ErrorIs(t, err, lease.ErrInvalid)
		_, err = e.d.TokenRevoke(e.ctx, &driver.TokenRevokeParams{ID: ""})
		require.ErrorIs(t, err, lease.ErrInvalid)
		all, err := e.d.TokenList(e.ctx, &driver.TokenListParams{})
		require.NoError(t, err)
		require.Empty(t, all, "nothing was stored")
	}},
}
