package driver

import (
	"context"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/leasehold/leasehold/auth"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// TokenStore keeps the API's bearer tokens (package auth): each by its
// id, with only the SHA-256 of its secret, its scopes and when it was
// created and revoked. The secret itself is never stored, so a copy of
// the store grants nothing.
type TokenStore interface {
	// TokenCreate stores a new token. ErrConflict if its id or hash is
	// taken.
	TokenCreate(ctx context.Context, p *TokenCreateParams) (*Token, error)
	// TokenGet finds a token by the hash of its secret, revoked ones
	// included (RevokedAt set). ErrNotFound if none has it.
	TokenGet(ctx context.Context, p *TokenGetParams) (*Token, error)
	// TokenList lists every token, revoked ones included, by creation.
	TokenList(ctx context.Context, p *TokenListParams) ([]*Token, error)
	// TokenRevoke revokes a token; revoking it again keeps the first
	// revocation's time. ErrNotFound if no token has the id.
	TokenRevoke(ctx context.Context, p *TokenRevokeParams) (*Token, error)
}

// Token is one stored token.
type Token struct {
	ID        string
	Name      string
	Hash      []byte
	Scopes    []string
	CreatedAt time.Time // store clock
	RevokedAt time.Time // store clock; zero while the token is live
}

// Revoked reports whether the token was revoked.
func (t *Token) Revoked() bool { return !t.RevokedAt.IsZero() }

// MaxTokenNameBytes bounds a token's name (a label for people).
const MaxTokenNameBytes = 200

// TokenCreateParams stores a token.
type TokenCreateParams struct {
	ID     string
	Name   string
	Hash   []byte // auth.Hash of the secret
	Scopes []string
}

// Class implements lease.Classed: a token decides who may write, so it is
// written like a lease.
func (*TokenCreateParams) Class() lease.Durability { return lease.SyncCritical }

// Validate checks the id, the name, the hash's size and every scope.
func (p *TokenCreateParams) Validate() error {
	if err := journal.ValidateID("id", p.ID); err != nil {
		return err
	}
	if err := validTokenName(p.Name); err != nil {
		return err
	}
	if len(p.Hash) != auth.HashSize {
		return &journal.InputError{Field: "hash", Problem: fmt.Sprintf("%d bytes: a token hash is %d", len(p.Hash), auth.HashSize)}
	}
	_, err := auth.ParseScopes(p.Scopes)
	return err
}

func validTokenName(n string) error {
	switch {
	case len(n) > MaxTokenNameBytes:
		return &journal.InputError{Field: "name", Problem: fmt.Sprintf("%d bytes is over the limit of %d", len(n), MaxTokenNameBytes)}
	case !utf8.ValidString(n):
		return &journal.InputError{Field: "name", Problem: "not valid UTF-8"}
	}
	for _, r := range n {
		if unicode.IsControl(r) {
			return &journal.InputError{Field: "name", Problem: fmt.Sprintf("control character %U", r)}
		}
	}
	return nil
}

// TokenGetParams names a token by the hash of its secret.
type TokenGetParams struct{ Hash []byte }

// Validate checks the hash's size.
func (p *TokenGetParams) Validate() error {
	if len(p.Hash) != auth.HashSize {
		return &journal.InputError{Field: "hash", Problem: fmt.Sprintf("%d bytes: a token hash is %d", len(p.Hash), auth.HashSize)}
	}
	return nil
}

// TokenListParams lists tokens. It has no fields yet; it is a struct so
// that filters can be added without changing the interface.
type TokenListParams struct{}

// Validate accepts everything.
func (*TokenListParams) Validate() error { return nil }

// TokenRevokeParams names a token by its id.
type TokenRevokeParams struct{ ID string }

// Class implements lease.Classed.
func (*TokenRevokeParams) Class() lease.Durability { return lease.SyncCritical }

// Validate checks the id.
func (p *TokenRevokeParams) Validate() error { return journal.ValidateID("id", p.ID) }
