package main

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/sqlite"
	"github.com/leasehold/leasehold/server"
)

// TestServerErrorsMapToExitCodes: a command talking to a running server
// exits like one talking to the store — the server's problem documents
// come back as the sentinels their status stands for (apiClient). A real
// server over a real SQLite store, with no worker attached: an unknown
// worker is not found (3), an unknown mode is refused input (2), a token
// without admin is an error (1), and the problem's title and detail are
// what the user reads.
func TestServerErrorsMapToExitCodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "lh.db")})
	require.NoError(t, err)
	c, err := leasehold.NewClient(ctx, d, leasehold.Config{})
	require.NoError(t, err)
	defer c.Close()
	s, err := server.New(c, server.Config{})
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	admin, _, err := c.CreateToken(ctx, "admin", []string{"admin"})
	require.NoError(t, err)
	reader, _, err := c.CreateToken(ctx, "reader", []string{"read"})
	require.NoError(t, err)

	for _, tc := range []struct {
		token string
		args  []string
		code  int
		says  string
	}{
		{admin, []string{"mode", "get", "--json"}, exitOK, ""},
		{admin, []string{"mode", "set", "sync", "--worker", "echo-9"}, exitNotFound, `no worker "echo-9" is attached`},
		{admin, []string{"mode", "set", "fast", "--all"}, exitUsage, "fast"},
		{reader, []string{"mode", "set", "sync", "--all"}, exitError, "forbidden"},
		{"lh_not_a_token", []string{"mode", "get"}, exitError, "unauthorized"},
	} {
		out, errOut, code := cliOut(append(tc.args, "--server", srv.URL, "--token", tc.token)...)
		require.Equal(t, tc.code, code, "%v: %s%s", tc.args, out, errOut)
		require.Contains(t, errOut, tc.says, "%v", tc.args)
		if tc.code == exitOK {
			require.JSONEq(t, `{"workers":[{"worker":"remote-holders","mode":"writebehind"}]}`, out) // the remote runners, always listed
		}
	}
}
