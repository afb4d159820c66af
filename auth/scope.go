package auth

import (
	"fmt"
	"strings"

	"github.com/leasehold/leasehold/journal"
)

// Action is what a scope allows, ordered: read < work < admin.
type Action string

// The actions.
const (
	Read  Action = "read"  // look: runs, their effects and events, worlds, journals
	Work  Action = "work"  // hold leases: enqueue, claim, renew, effects, emit, complete; renew, append, hand off, submit
	Admin Action = "admin" // operate: cancel, unblock; create, grant, revoke; and, unrestricted, tokens
)

func (a Action) rank() int {
	switch a {
	case Read:
		return 1
	case Work:
		return 2
	case Admin:
		return 3
	}
	return 0
}

// Kind is what a scope's pattern names.
type Kind string

// The kinds. Any is a bare scope's: every kind, token management included.
const (
	Queue Kind = "queue"
	World Kind = "world"
	Token Kind = "token" // token management: only a bare admin scope allows it
	Any   Kind = "*"
)

// MaxScopes bounds the scopes of one token, MaxScopeBytes one scope.
const (
	MaxScopes     = 32
	MaxScopeBytes = 200
)

// Scope is one parsed scope.
type Scope struct {
	Action  Action
	Kind    Kind
	Pattern string // exact name, prefix ending in "*", or "*"
}

// ParseScope reads a scope (see the package doc); a *journal.InputError
// (ErrInvalid) names what is wrong.
func ParseScope(s string) (Scope, error) {
	bad := func(f string, a ...any) (Scope, error) {
		return Scope{}, &journal.InputError{Field: "scope", Problem: fmt.Sprintf("%.60q: ", s) + fmt.Sprintf(f, a...)}
	}
	if len(s) > MaxScopeBytes {
		return bad("%d bytes is over the limit of %d", len(s), MaxScopeBytes)
	}
	parts := strings.Split(s, ":")
	act := Action(parts[0])
	if act.rank() == 0 {
		return bad("the action must be read, work or admin")
	}
	switch len(parts) {
	case 1:
		return Scope{Action: act, Kind: Any, Pattern: "*"}, nil
	case 3:
	default:
		return bad("write ACTION or ACTION:queue|world:PATTERN")
	}
	kind := Kind(parts[1])
	if kind != Queue && kind != World {
		return bad("the kind must be queue or world")
	}
	pat := parts[2]
	if pat != "*" {
		name := strings.TrimSuffix(pat, "*")
		if err := journal.ValidateID("pattern", name); err != nil {
			return bad("the pattern is a name, a prefix ending in *, or *: %v", err)
		}
		if strings.Contains(name, "*") {
			return bad("* may only end the pattern")
		}
	}
	return Scope{Action: act, Kind: kind, Pattern: pat}, nil
}

// String is the scope as ParseScope reads it.
func (s Scope) String() string {
	if s.Kind == Any {
		return string(s.Action)
	}
	return string(s.Action) + ":" + string(s.Kind) + ":" + s.Pattern
}

// Allows reports whether s allows action on kind's name. An empty name
// (an unnamed listing) is allowed only by the pattern "*". Token
// management is allowed only by a bare admin scope.
func (s Scope) Allows(action Action, kind Kind, name string) bool {
	if s.Action.rank() < action.rank() || (s.Kind != Any && s.Kind != kind) {
		return false
	}
	if kind == Token {
		return s.Kind == Any
	}
	switch {
	case s.Pattern == "*":
		return true
	case name == "":
		return false
	case strings.HasSuffix(s.Pattern, "*"):
		return strings.HasPrefix(name, strings.TrimSuffix(s.Pattern, "*"))
	default:
		return name == s.Pattern
	}
}

// Scopes is a token's scopes: it allows what any of them allows.
type Scopes []Scope

// ParseScopes reads a token's scopes: 1 to MaxScopes of them.
func ParseScopes(ss []string) (Scopes, error) {
	if len(ss) == 0 || len(ss) > MaxScopes {
		return nil, &journal.InputError{Field: "scopes", Problem: fmt.Sprintf("%d scopes: a token has 1 to %d", len(ss), MaxScopes)}
	}
	out := make(Scopes, len(ss))
	for i, s := range ss {
		sc, err := ParseScope(s)
		if err != nil {
			return nil, err
		}
		out[i] = sc
	}
	return out, nil
}

// Allows reports whether any scope allows action on kind's name.
func (ss Scopes) Allows(action Action, kind Kind, name string) bool {
	for _, s := range ss {
		if s.Allows(action, kind, name) {
			return true
		}
	}
	return false
}

// AllowsAll reports whether action is allowed on every name of kind, so
// a caller need not look the name up first (a run's queue).
func (ss Scopes) AllowsAll(action Action, kind Kind) bool { return ss.Allows(action, kind, "") }
