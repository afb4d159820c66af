package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/leasehold/leasehold/driver"
)

const tokenColumns = `id, name, hash, scopes, created_at, revoked_at`

func scanToken(r rowScanner) (*driver.Token, error) {
	var t driver.Token
	var scopes string
	var created int64
	var revoked sql.NullInt64
	if err := r.Scan(&t.ID, &t.Name, &t.Hash, &scopes, &created, &revoked); err != nil {
		return nil, err
	}
	t.Scopes = strings.Fields(scopes)
	t.CreatedAt = fromMicros(created)
	if revoked.Valid {
		t.RevokedAt = fromMicros(revoked.Int64)
	}
	return &t, nil
}

// TokenCreate implements driver.Driver.
func (d *store) TokenCreate(ctx context.Context, p *driver.TokenCreateParams) (*driver.Token, error) {
	now := d.clock.Now().UnixMicro()
	_, err := d.w.ExecContext(ctx, `INSERT INTO api_tokens (id, name, hash, scopes, created_at) VALUES (?, ?, ?, ?, ?)`,
		p.ID, p.Name, p.Hash, strings.Join(p.Scopes, " "), now)
	if d.eng.IsUnique(err) {
		return nil, fmt.Errorf("sqlite: token %s: id or hash taken: %w", p.ID, driver.ErrConflict)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: creating token %s: %w", p.ID, err)
	}
	return &driver.Token{ID: p.ID, Name: p.Name, Hash: append([]byte(nil), p.Hash...),
		Scopes: append([]string(nil), p.Scopes...), CreatedAt: fromMicros(now)}, nil
}

// TokenGet implements driver.Driver.
func (d *store) TokenGet(ctx context.Context, p *driver.TokenGetParams) (*driver.Token, error) {
	t, err := scanToken(d.r.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE hash = ?`, p.Hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: no token has this hash: %w", driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading a token: %w", err)
	}
	return t, nil
}

// TokenList implements driver.Driver.
func (d *store) TokenList(ctx context.Context, _ *driver.TokenListParams) ([]*driver.Token, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+tokenColumns+` FROM api_tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing tokens: %w", err)
	}
	defer rows.Close()
	var out []*driver.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: listing tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: listing tokens: %w", err)
	}
	return out, nil
}

// TokenRevoke implements driver.Driver: the first revocation's time is
// kept (coalesce), so revoking twice is harmless.
func (d *store) TokenRevoke(ctx context.Context, p *driver.TokenRevokeParams) (*driver.Token, error) {
	t, err := scanToken(d.w.QueryRowContext(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, ?)
		WHERE id = ? RETURNING `+tokenColumns, d.clock.Now().UnixMicro(), p.ID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: no token %s: %w", p.ID, driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: revoking token %s: %w", p.ID, err)
	}
	return t, nil
}
