package leasehold_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
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

// FuzzConfigValidate: Config.Validate refuses exactly a DatabaseURL that is
// not postgres:// or postgresql://, an invalid queue name and a world
// timing that (with its defaults) breaks SPEC §1, with errors matching
// ErrInvalid or ErrInvalidTiming; and its message never repeats the
// password of a URL net/url can parse (that message ends up in logs).
func FuzzConfigValidate(f *testing.F) {
	f.Add("", "emails", int64(0), int64(0))
	f.Add("postgres://u:secret@db:5432/x", "q", int64(30*time.Second), int64(15*time.Second))
	f.Add("postgresql://db/x", "", int64(0), int64(0))
	f.Add("mysql://u:hunter2@db/x", "q", int64(0), int64(0))
	f.Add("file:leasehold.db", "a b", int64(-1), int64(0))
	f.Add("postgres:/u:secret@db", "q", int64(10*time.Second), int64(20*time.Second))
	f.Add("http://[::1]:secretpw@x", "q", int64(0), int64(0))
	f.Fuzz(func(t *testing.T, db, queue string, leaseNS, stopNS int64) {
		cfg := leasehold.Config{DatabaseURL: db, Queues: []string{queue},
			WorldTiming: lease.Timing{Lease: time.Duration(leaseNS), Stop: time.Duration(stopNS)}}
		err := cfg.Validate()

		badURL := db != "" && !strings.HasPrefix(db, "postgres://") && !strings.HasPrefix(db, "postgresql://")
		badQueue := runs.ValidateQueue(queue) != nil
		badTiming := cfg.WorldTiming.WithDefaults(lease.WorldDefaults()).Validate() != nil
		require.Equal(t, badURL || badQueue || badTiming, err != nil, "Validate() = %v", err)
		if err == nil {
			return
		}
		require.True(t, errors.Is(err, leasehold.ErrInvalid) || errors.Is(err, leasehold.ErrInvalidTiming), "%v", err)

		pw, rest, _ := urlPassword(db)
		if u, perr := url.Parse(db); perr != nil || u.User == nil {
			pw = "" // not a URL with a userinfo
		}
		if len(pw) >= 3 && !strings.Contains(rest, pw) && !strings.Contains(queue, pw) {
			require.NotContains(t, err.Error(), pw, "the password of %q is in the error", db)
		}
	})
}

// TestConfigValidateRedactsPasswords is what FuzzConfigValidate found: the
// error for a DatabaseURL that is not a postgres URL is meant to drop the
// password (redact), but (a) redact ends the userinfo at the first "@",
// while net/url and pgx end it at the last, so with an "@" in the user or
// password ("p@ss") the rest of the password leaks ("ss"); and (b) a
// libpq key=value connection string — which pgx accepts, so users will
// pass it — is printed whole, password and all.
func TestConfigValidateRedactsPasswords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, db, leaked string }{
		{"at sign in a URL's password", "mysql://app:hunter2@secret7@db/app", "secret7"},
		{"key=value DSN", "host=db user=app password=hunter2 dbname=lh", "hunter2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := leasehold.Config{DatabaseURL: c.db}.Validate()
			require.ErrorIs(t, err, leasehold.ErrInvalid)
			require.NotContains(t, err.Error(), c.leaked)
		})
	}
}
