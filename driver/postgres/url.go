package postgres

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/leasehold/driver"
)

// parseURL parses Config.URL. A URL pgx cannot parse (a port of 99999 or
// "abc", a bad percent-escape, an unknown sslmode) is the caller's input:
// it is refused with driver.ErrInvalid, and the message names the URL with
// its password dropped by our rule, not pgx's. pgx masks the password of
// a URL that does not parse only as best it can: for
// postgres://u:s@c@h:-1/db it showed the "c" — the userinfo ends at the
// last "@" of the authority, as net/url and pgx read it when it parses.
func parseURL(u string) (*pgxpool.Config, error) {
	base, err := pgxpool.ParseConfig(u)
	if err != nil {
		return nil, fmt.Errorf("postgres: Config.URL %s does not parse: %s: %w", RedactURL(u), parseProblem(u, err), driver.ErrInvalid)
	}
	return base, nil
}

// parseProblem is what pgx said was wrong, without the connection string
// it quotes, and with every occurrence of the password masked.
func parseProblem(u string, err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "`: "); i >= 0 {
		msg = msg[i+len("`: "):]
	}
	for _, pw := range passwords(u) {
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
	}
	return msg
}

var kvPassword = regexp.MustCompile(`password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)`)

// passwords are the password-like parts of a connection string: a URL's
// userinfo after its first ":" (and the whole userinfo, which is all a
// malformed one may be), and every password= value.
func passwords(u string) []string {
	var out []string
	if _, rest, ok := strings.Cut(u, "://"); ok {
		authority := rest
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			authority = rest[:i]
		}
		if i := strings.LastIndex(authority, "@"); i >= 0 {
			userinfo := authority[:i]
			if _, pw, ok := strings.Cut(userinfo, ":"); ok && pw != "" {
				out = append(out, pw)
			}
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(u, -1) {
		if v := strings.Trim(m[1], "'"); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// RedactURL shows a URL without its userinfo and query (which may carry
// password=…) for error messages: the userinfo ends at the last "@" of the
// authority (as net/url and pgx read it, so an "@" inside a password cannot
// leak the rest of it). Anything that is not a URL is not shown at all.
// The CLI uses it too, so there is one redaction rule.
func RedactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return "(a key=value string; not shown, it may hold a password)"
	}
	authority, path := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		authority = "…@" + authority[i+1:]
	}
	if i := strings.IndexAny(path, "?#"); i >= 0 {
		path = path[:i] + "?…"
	}
	return scheme + "://" + authority + path
}
