package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix starts every token secret, so a leaked one is recognizable
// (secret scanners, logs) and a mistyped header is refused without a
// store lookup.
const SecretPrefix = "lh_"

// HashSize is the size of a stored token hash (SHA-256).
const HashSize = sha256.Size

// secretBytes is the secret's entropy: 256 bits. A secret this long needs
// no slow hash (bcrypt, argon2) — nobody can guess it, and a fast hash
// lets the store look it up by hash on every request.
const secretBytes = 32

// Sentinels the server answers with 401 and 403.
var (
	// ErrUnauthorized: no token, a malformed one, or one the store does
	// not know or has revoked.
	ErrUnauthorized = errors.New("leasehold: unauthorized: a valid bearer token is required")
	// ErrForbidden: the token is valid but none of its scopes allows the
	// call.
	ErrForbidden = errors.New("leasehold: forbidden: the token's scopes do not allow this")
)

// ForbiddenError names what a token was refused. It matches ErrForbidden.
type ForbiddenError struct {
	TokenID string
	Action  Action
	Kind    Kind
	Name    string // the queue or world; "" for token management and unnamed listings
}

func (e *ForbiddenError) Error() string {
	what := string(e.Kind)
	if e.Name != "" {
		what += " " + fmt.Sprintf("%q", e.Name)
	}
	return fmt.Sprintf("token %s may not %s %s", e.TokenID, e.Action, what)
}

// Unwrap returns ErrForbidden.
func (e *ForbiddenError) Unwrap() error { return ErrForbidden }

// NewSecret returns a fresh token: its secret (shown once to whoever made
// it), its id (public: listing and revoking name it) and the hash the
// store keeps.
func NewSecret() (secret, id string, hash []byte, err error) {
	b := make([]byte, secretBytes+8)
	if _, err := rand.Read(b); err != nil {
		return "", "", nil, fmt.Errorf("auth: reading randomness: %w", err)
	}
	secret = SecretPrefix + base64.RawURLEncoding.EncodeToString(b[:secretBytes])
	id = "tok-" + hex.EncodeToString(b[secretBytes:])
	return secret, id, Hash(secret), nil
}

// Hash is what the store keeps of a secret.
func Hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// Bearer reads the secret from an Authorization header value ("Bearer
// lh_…"); ErrUnauthorized when it is absent or malformed.
func Bearer(header string) (string, error) {
	scheme, secret, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", fmt.Errorf("%w (send Authorization: Bearer <token>)", ErrUnauthorized)
	}
	secret = strings.TrimSpace(secret)
	if !strings.HasPrefix(secret, SecretPrefix) || len(secret) > 256 {
		return "", fmt.Errorf("%w (not a leasehold token)", ErrUnauthorized)
	}
	return secret, nil
}
