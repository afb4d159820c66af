package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
)

const tokenColumns = `id, name, hash, scopes, created_at, revoked_at`

func scanToken(r pgx.Row) (*driver.Token, error) {
	var t driver.Token
	var scopes string
	var revoked *time.Time
	if err := r.Scan(&t.ID, &t.Name, &t.Hash, &scopes, &t.CreatedAt, &revoked); err != nil {
		return nil, err
	}
	t.Scopes = strings.Fields(scopes)
	t.CreatedAt = t.CreatedAt.UTC()
	if revoked != nil {
		t.RevokedAt = revoked.UTC()
	}
	return &t, nil
}

// TokenCreate implements driver.Driver.
func (d *store) TokenCreate(ctx context.Context, p *driver.TokenCreateParams) (*driver.Token, error) {
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fmt.Errorf("postgres: creating token %s: %w", p.ID, err)
	}
	defer conn.Release()
	t, err := scanToken(conn.QueryRow(ctx, `INSERT INTO api_tokens (id, name, hash, scopes, created_at)
		VALUES ($1, $2, $3, $4, coalesce($5::timestamptz, clock_timestamp())) RETURNING `+tokenColumns,
		p.ID, p.Name, p.Hash, strings.Join(p.Scopes, " "), d.fakeNow()))
	if err != nil {
		return nil, fmt.Errorf("postgres: creating token %s: %w", p.ID, mapWriteError(withCtx(ctx, err)))
	}
	return t, nil
}

// TokenGet implements driver.Driver.
func (d *store) TokenGet(ctx context.Context, p *driver.TokenGetParams) (*driver.Token, error) {
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading a token: %w", err)
	}
	defer conn.Release()
	t, err := scanToken(conn.QueryRow(ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE hash = $1`, p.Hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: no token has this hash: %w", driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: reading a token: %w", withCtx(ctx, err))
	}
	return t, nil
}

// TokenList implements driver.Driver.
func (d *store) TokenList(ctx context.Context, _ *driver.TokenListParams) ([]*driver.Token, error) {
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing tokens: %w", err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT `+tokenColumns+` FROM api_tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing tokens: %w", withCtx(ctx, err))
	}
	defer rows.Close()
	var out []*driver.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: listing tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: listing tokens: %w", withCtx(ctx, err))
	}
	return out, nil
}

// TokenRevoke implements driver.Driver: the first revocation's time is
// kept (coalesce), so revoking twice is harmless.
func (d *store) TokenRevoke(ctx context.Context, p *driver.TokenRevokeParams) (*driver.Token, error) {
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fmt.Errorf("postgres: revoking token %s: %w", p.ID, err)
	}
	defer conn.Release()
	t, err := scanToken(conn.QueryRow(ctx, `UPDATE api_tokens
		SET revoked_at = coalesce(revoked_at, coalesce($2::timestamptz, clock_timestamp()))
		WHERE id = $1 RETURNING `+tokenColumns, p.ID, d.fakeNow()))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: no token %s: %w", p.ID, driver.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: revoking token %s: %w", p.ID, withCtx(ctx, err))
	}
	return t, nil
}
