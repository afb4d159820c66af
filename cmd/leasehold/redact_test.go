package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// urlPassword returns the password of a URL's userinfo as net/url and
// pgx read it (the userinfo runs to the authority's last "@"), the URL
// without its userinfo, and the userinfo.
func urlPassword(u string) (password, rest, userinfo string) {
	i := strings.Index(u, "://")
	if i < 0 {
		return "", u, ""
	}
	auth := u[i+3:]
	if j := strings.IndexAny(auth, "/?#"); j >= 0 {
		auth = auth[:j]
	}
	at := strings.LastIndex(auth, "@")
	if at < 0 {
		return "", u, ""
	}
	userinfo = auth[:at]
	colon := strings.Index(userinfo, ":")
	if colon < 0 {
		return "", u, userinfo
	}
	return userinfo[colon+1:], u[:i+3] + u[i+3+at:], userinfo
}

// FuzzRedact: what redact prints (it ends up in logs) never repeats the
// password of a URL net/url can parse.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{"postgres://u:secret@db:5432/x", "postgresql://db/x", "mysql://u:hunter2@db/x",
		"postgres:/u:secret@db", "http://[::1]:secretpw@x", "postgres://a:p@ss@db/x?password=zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, db string) {
		got := redact(db)
		pw, rest, _ := urlPassword(db)
		if u, perr := url.Parse(db); perr != nil || u.User == nil {
			pw = "" // not a URL with a userinfo
		}
		if len(pw) >= 3 && !strings.Contains(rest, pw) {
			require.NotContains(t, got, pw, "the password of %q is in %q", db, got)
		}
	})
}

// TestRedactDropsPasswords is what fuzzing the old Config.Validate found:
// (a) the userinfo ends at the authority's last "@", as net/url and pgx
// read it, so an "@" in the password ("p@ss") must not leak its rest; and
// (b) a libpq key=value connection string — which pgx accepts, so users
// will pass it — is not printed at all; nor is a query's password=….
func TestRedactDropsPasswords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, db, leaked string }{
		{"at sign in a URL's password", "postgres://app:hunter2@secret7@db/app", "secret7"},
		{"key=value DSN", "host=db user=app password=hunter2 dbname=lh", "hunter2"},
		{"password in the query", "postgres://db/app?password=hunter2", "hunter2"},
	} {
		require.NotContains(t, redact(c.db), c.leaked, c.name)
	}
}
