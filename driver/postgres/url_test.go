package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
)

// TestBadURLIsInvalidAndShowsNoPassword (issue 17, defect 10): a URL pgx
// cannot parse was a raw pgx error; it is now ErrInvalid, and its message
// names the problem and the host but no part of the password — also
// where pgx's own masking kept some of it (an "@" inside the password of
// a URL that does not parse).
func TestBadURLIsInvalidAndShowsNoPassword(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ url, problem, secret string }{
		{"postgres://u:hunter2@127.0.0.1:99999/db", "invalid port", "hunter2"},
		{"postgres://u:hunter2@127.0.0.1:abc/db", "invalid port", "hunter2"},
		{"postgresql://u:hunter2@127.0.0.1:-1/db", "invalid port", "hunter2"},
		{"postgres://u:hun@ter2@127.0.0.1:abc/db", "invalid port", "ter2"},
		{"postgres://u:hunter2@127.0.0.1:5432/db?sslmode=bogus&password=sesame", "sslmode is invalid", "sesame"},
		{"postgres://u:hun%zzter2@127.0.0.1/db", "percent-encoded", "hun"},
		{"host=127.0.0.1 port=abc password=hunter2", "invalid port", "hunter2"},
	} {
		_, err := Open(context.Background(), Config{URL: c.url})
		require.Error(t, err, c.url)
		require.True(t, errors.Is(err, driver.ErrInvalid), "%s: %v", c.url, err)
		require.ErrorContains(t, err, c.problem, c.url)
		require.NotContains(t, err.Error(), c.secret, c.url)
		if strings.Contains(c.url, "://") {
			require.ErrorContains(t, err, "127.0.0.1", "names the host")
		}
	}
}
