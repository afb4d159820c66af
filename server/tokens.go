package server

import (
	"net/http"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/internal/httpapi"
	"github.com/leasehold/leasehold/journal"
)

// The token endpoints: minting, listing and revoking bearer tokens, for
// a bare admin token only (authz.go). The secret is in the create answer
// and nowhere else.

type tokenCreateRequest struct {
	Name   httpapi.StrictString   `json:"name"`
	Scopes []httpapi.StrictString `json:"scopes"`
}

type tokenBody struct {
	ID        string   `json:"id"`
	Name      string   `json:"name,omitempty"`
	Scopes    []string `json:"scopes"`
	CreatedAt string   `json:"created_at"`
	RevokedAt string   `json:"revoked_at,omitempty"`
}

func tokenOf(t *driver.Token) tokenBody {
	return tokenBody{ID: t.ID, Name: t.Name, Scopes: t.Scopes, CreatedAt: stamp(t.CreatedAt), RevokedAt: stamp(t.RevokedAt)}
}

type tokenCreated struct {
	Token  tokenBody `json:"token"`
	Secret string    `json:"secret"` // shown once: the store keeps its hash
}

type tokenResponse struct {
	Token tokenBody `json:"token"`
}

type tokensResponse struct {
	Tokens []tokenBody `json:"tokens"`
}

// createToken is POST /v1/tokens: 201 with the secret.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request) {
	var req tokenCreateRequest
	if err := s.decode(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	scopes := make([]string, len(req.Scopes))
	for i, sc := range req.Scopes {
		scopes[i] = string(sc)
	}
	secret, tok, err := s.c.CreateToken(r.Context(), string(req.Name), scopes)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	s.cfg.Logger.Info("token created", "id", tok.ID, "name", tok.Name, "scopes", tok.Scopes, "by", principalOf(r.Context()).id)
	writeJSONStatus(w, http.StatusCreated, tokenCreated{Token: tokenOf(tok), Secret: secret})
}

// listTokens is GET /v1/tokens: every token, revoked ones included; no
// secrets (the store has none).
func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) {
	ts, err := s.c.Tokens(r.Context())
	if err != nil {
		s.problem(w, r, err)
		return
	}
	out := tokensResponse{Tokens: make([]tokenBody, len(ts))}
	for i, t := range ts {
		out.Tokens[i] = tokenOf(t)
	}
	writeJSON(w, out)
}

// revokeToken is POST /v1/tokens/{id}/revoke (empty body or {}): refused
// by this server at once, by others within their TokenCacheTTL.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) {
	var req struct{}
	if r.ContentLength != 0 {
		if err := s.decode(w, r, &req); err != nil {
			s.problem(w, r, err)
			return
		}
	}
	id := r.PathValue("id")
	if err := journal.ValidateID("id", id); err != nil {
		s.problem(w, r, err)
		return
	}
	tok, err := s.c.RevokeToken(r.Context(), id)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	s.tokens.drop(id)
	s.cfg.Logger.Info("token revoked", "id", tok.ID, "by", principalOf(r.Context()).id)
	writeJSON(w, tokenResponse{Token: tokenOf(tok)})
}
