package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/clock"
	"github.com/leasehold/leasehold/driver"
)

// principal is the token a request was authenticated with.
type principal struct {
	id     string
	scopes auth.Scopes
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p *principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

func principalOf(ctx context.Context) *principal {
	p, _ := ctx.Value(principalKey{}).(*principal)
	return p
}

// allow is the check a handler makes once it knows what a call touches
// (a body's queue): a *auth.ForbiddenError unless the request's token
// allows action on kind's name. A request with no principal — only
// /healthz has none — is refused.
func allow(r *http.Request, action auth.Action, kind auth.Kind, name string) error {
	p := principalOf(r.Context())
	if p == nil {
		return auth.ErrUnauthorized
	}
	if !p.scopes.Allows(action, kind, name) {
		return &auth.ForbiddenError{TokenID: p.id, Action: action, Kind: kind, Name: name}
	}
	return nil
}

// authenticate finds the request's token and checks its rate; the
// request it returns carries the principal.
func (s *Server) authenticate(r *http.Request) (*http.Request, error) {
	secret, err := auth.Bearer(r.Header.Get("Authorization"))
	if err != nil {
		return nil, err
	}
	p, err := s.tokens.lookup(r.Context(), secret)
	if err != nil {
		return nil, err
	}
	if err := s.limits.take(p.id); err != nil {
		return nil, err
	}
	return r.WithContext(withPrincipal(r.Context(), p)), nil
}

// tokenCache keeps the tokens recently seen, so a request costs a store
// read only once per TokenCacheTTL per token. A token revoked elsewhere
// (the CLI, another server) is refused here within the TTL; one revoked
// through this server, at once (drop).
type tokenCache struct {
	d   driver.Driver
	clk clock.Clock
	ttl time.Duration

	mu sync.Mutex // guards m; never held across a store call
	m  map[[auth.HashSize]byte]cachedToken
}

type cachedToken struct {
	p       *principal // nil: revoked
	fetched time.Time
}

// maxCachedTokens bounds the cache: past it the cache starts over, so
// requests with many different valid tokens cannot grow it without end.
const maxCachedTokens = 10_000

func newTokenCache(d driver.Driver, clk clock.Clock, ttl time.Duration) *tokenCache {
	return &tokenCache{d: d, clk: clk, ttl: ttl, m: map[[auth.HashSize]byte]cachedToken{}}
}

func (c *tokenCache) lookup(ctx context.Context, secret string) (*principal, error) {
	var key [auth.HashSize]byte
	copy(key[:], auth.Hash(secret))
	now := c.clk.Now()
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if !ok || now.Sub(e.fetched) >= c.ttl {
		tok, err := c.d.TokenGet(ctx, &driver.TokenGetParams{Hash: key[:]})
		switch {
		case errors.Is(err, driver.ErrNotFound):
			return nil, fmt.Errorf("%w (unknown token)", auth.ErrUnauthorized)
		case err != nil:
			return nil, fmt.Errorf("reading the token: %w", err)
		}
		e = cachedToken{fetched: now}
		if !tok.Revoked() {
			scopes, err := auth.ParseScopes(tok.Scopes)
			if err != nil { // stored by an older or newer binary with other rules: refuse, say why
				return nil, fmt.Errorf("%w (token %s has scopes this server cannot read: %v)", auth.ErrUnauthorized, tok.ID, err)
			}
			e.p = &principal{id: tok.ID, scopes: scopes}
		}
		c.mu.Lock()
		if len(c.m) >= maxCachedTokens {
			clear(c.m)
		}
		c.m[key] = e
		c.mu.Unlock()
	}
	if e.p == nil {
		return nil, fmt.Errorf("%w (the token was revoked)", auth.ErrUnauthorized)
	}
	return e.p, nil
}

// drop forgets the token with id, so its revocation through this server
// takes effect at once.
func (c *tokenCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		if e.p != nil && e.p.id == id {
			delete(c.m, k)
		}
	}
}
