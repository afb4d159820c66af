package host

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/lease"
)

func TestNodeKeyFileCreatedPrivateAndLooseOnesRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "node.key")
	k, err := LoadOrCreateKey(path)
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "created with mode 0600")
	again, err := LoadOrCreateKey(path)
	require.NoError(t, err)
	require.Equal(t, k, again, "the same key on the next start")

	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644, 0o666} {
		require.NoError(t, os.Chmod(path, mode))
		_, err := LoadOrCreateKey(path)
		var kf *KeyFileError
		require.ErrorAs(t, err, &kf, "mode %04o", mode)
		require.ErrorIs(t, err, lease.ErrInvalid)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "a refused key file is left as it was")

	bad := filepath.Join(t.TempDir(), "bad.key")
	require.NoError(t, os.WriteFile(bad, []byte("not a key\n"), 0o600))
	_, err = LoadOrCreateKey(bad)
	require.ErrorIs(t, err, lease.ErrInvalid)
}
