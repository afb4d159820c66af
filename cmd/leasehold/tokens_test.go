package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/auth"
)

// TestTokensCommands: `tokens create` prints the secret once and stores
// only its hash; `tokens ls` lists without secrets (and --json); `tokens
// revoke` revokes; bad scopes and usage are refused with exit 1 and
// nothing stored. A serve bootstrap mints an admin token only when the
// store has no live one.
func TestTokensCommands(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "lh.db")
	cli := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append(args, "--db", db), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := cli("tokens", "create", "--name", "ci", "--scope", "work:queue:emails.*", "--scope", "read")
	require.Equal(t, 0, code, errOut)
	secret := regexp.MustCompile(`(?m)^(lh_\S+)$`).FindStringSubmatch(out)
	require.NotNil(t, secret, out)
	id := regexp.MustCompile(`token (tok-[0-9a-f]+)`).FindStringSubmatch(out)[1]

	code, out, _ = cli("tokens", "ls")
	require.Equal(t, 0, code)
	require.Contains(t, out, id)
	require.Contains(t, out, "work:queue:emails.* read")
	require.NotContains(t, out, secret[1], "a listing shows no secret")
	code, out, _ = cli("tokens", "ls", "--json")
	require.Equal(t, 0, code)
	var tj tokenJSON
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(out)), &tj))
	require.Equal(t, id, tj.ID)
	require.Empty(t, tj.RevokedAt)

	for _, bad := range []struct {
		args []string
		code int
	}{
		{[]string{"tokens", "create", "--scope", "root"}, exitUsage},
		{[]string{"tokens", "create"}, exitUsage},
		{[]string{"tokens", "revoke"}, exitUsage},
		{[]string{"tokens", "revoke", "tok-none"}, exitNotFound},
		{[]string{"tokens", "frobnicate"}, exitUsage},
	} {
		code, _, errOut := cli(bad.args...)
		require.Equal(t, bad.code, code, "%v: %s", bad.args, errOut)
	}

	ctx := context.Background()
	c, err := openClient(ctx, db, leasehold.Config{})
	require.NoError(t, err)
	defer c.Close()
	ts, err := c.Tokens(ctx)
	require.NoError(t, err)
	require.Len(t, ts, 1, "no refused command stored a token")
	require.Equal(t, auth.Hash(secret[1]), ts[0].Hash, "the store keeps the hash")
	var boot bytes.Buffer
	require.NoError(t, bootstrapToken(ctx, c, &boot))
	require.Empty(t, boot.String(), "a live token in the store: serve mints none")

	code, out, errOut = cli("tokens", "revoke", id)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "revoked")
	require.NoError(t, bootstrapToken(ctx, c, &boot))
	require.Contains(t, boot.String(), "admin token: lh_", "every token revoked: serve mints an admin token")
}
