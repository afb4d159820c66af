package leasehold

import (
	"context"

	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/driver"
)

// Token is an API bearer token of `leasehold serve` as the store keeps it:
// its id, name, scopes (package auth) and the SHA-256 of its secret —
// never the secret.
type Token = driver.Token

// CreateToken mints a token with the given scopes (see package auth:
// "admin", "work:queue:emails.*", …) and returns its secret, which is
// shown this once: the store keeps only its hash.
func (c *Client) CreateToken(ctx context.Context, name string, scopes []string) (secret string, tok *Token, err error) {
	secret, id, hash, err := auth.NewSecret()
	if err != nil {
		return "", nil, err
	}
	tok, err = c.d.TokenCreate(ctx, &driver.TokenCreateParams{ID: id, Name: name, Hash: hash, Scopes: scopes})
	if err != nil {
		return "", nil, err
	}
	return secret, tok, nil
}

// Tokens lists every token, revoked ones included, by creation.
func (c *Client) Tokens(ctx context.Context) ([]*Token, error) {
	return c.d.TokenList(ctx, &driver.TokenListParams{})
}

// RevokeToken revokes the token with id; a server refuses it within its
// token cache's lifetime (server.Config.TokenCacheTTL) — at once on the
// server it was revoked through. ErrNotFound if there is no such token.
func (c *Client) RevokeToken(ctx context.Context, id string) (*Token, error) {
	return c.d.TokenRevoke(ctx, &driver.TokenRevokeParams{ID: id})
}
