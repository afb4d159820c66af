// Package auth is what `leasehold serve` authorizes API calls with:
// bearer tokens (a random secret shown once, stored only as its SHA-256)
// and the scopes a token carries — an action (read, work, admin) over the
// queues or worlds whose names match a pattern.
//
// A scope is written
//
//	admin                   everything, token management included
//	read | work             that action (and the lower ones) on every queue and world
//	ACTION:queue:PATTERN    that action on the queues PATTERN matches
//	ACTION:world:PATTERN    that action on the worlds PATTERN matches
//
// where PATTERN is an exact name, a prefix ending in "*" ("emails.*"), or
// "*" alone. Actions are ordered read < work < admin: a token that may work
// a queue may also read it.
//
// The package holds no state and touches no store: the store keeps tokens
// (driver.TokenStore), the server checks them.
package auth
