package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/leasehold/driver"
)

// registerKey inserts the next version unless the key is the current one
// or a retired one (any version of the node's), in one statement:
// concurrent registrations of one node serialize on the primary key (a
// loser's INSERT fails unique and is retried once by NodeKeyRegister,
// when it sees the winner's row). No row: the key is a retired one.
const registerKey = `
WITH cur AS (
    SELECT version, public_key, registered_at FROM node_keys WHERE node = $1 ORDER BY version DESC LIMIT 1
), ins AS (
    INSERT INTO node_keys (node, version, public_key, registered_at)
    SELECT $1, coalesce((SELECT version FROM cur), 0) + 1, $2, coalesce($3::timestamptz, clock_timestamp())
    WHERE NOT EXISTS (SELECT 1 FROM node_keys WHERE node = $1 AND public_key = $2)
    RETURNING version, public_key, registered_at
)
SELECT version, public_key, registered_at FROM ins
UNION ALL
SELECT version, public_key, registered_at FROM cur WHERE public_key = $2`

// NodeKeyRegister implements driver.Driver.
func (d *store) NodeKeyRegister(ctx context.Context, p *driver.NodeKeyRegisterParams) (*driver.NodeKey, error) {
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fmt.Errorf("postgres: registering the key of node %q: %w", p.Node, err)
	}
	defer conn.Release()
	for try := 0; ; try++ {
		k := &driver.NodeKey{Node: p.Node}
		err = conn.QueryRow(ctx, registerKey, p.Node, p.PublicKey, d.fakeNow()).Scan(&k.Version, &k.PublicKey, &k.RegisteredAt)
		if err == nil {
			k.RegisteredAt = k.RegisteredAt.UTC()
			return k, nil
		}
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("postgres: registering the key of node %q: %w", p.Node, retiredKey(ctx, conn, p))
		}
		if !isUniqueViolation(err) || try > 0 {
			return nil, fmt.Errorf("postgres: registering the key of node %q: %w", p.Node, withCtx(ctx, err))
		}
	}
}

// retiredKey reads which version p's key was, for the refusal.
func retiredKey(ctx context.Context, conn *pgxpool.Conn, p *driver.NodeKeyRegisterParams) error {
	e := &driver.KeyRetiredError{Node: p.Node}
	if err := conn.QueryRow(ctx, `SELECT (SELECT max(version) FROM node_keys WHERE node = $1 AND public_key = $2),
		(SELECT max(version) FROM node_keys WHERE node = $1)`, p.Node, p.PublicKey).Scan(&e.Version, &e.Current); err != nil {
		return withCtx(ctx, err)
	}
	return e
}

// NodeKeyGet implements driver.Driver.
func (d *store) NodeKeyGet(ctx context.Context, p *driver.NodeKeyGetParams) (*driver.NodeKey, error) {
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading the key of node %q: %w", p.Node, err)
	}
	defer conn.Release()
	k, err := currentNodeKey(ctx, conn, p.Node)
	if err != nil && !errors.Is(err, driver.ErrNotFound) {
		return nil, fmt.Errorf("postgres: reading the key of node %q: %w", p.Node, err)
	}
	return k, err
}

func currentNodeKey(ctx context.Context, conn *pgxpool.Conn, node string) (*driver.NodeKey, error) {
	k := &driver.NodeKey{Node: node}
	err := conn.QueryRow(ctx, `SELECT version, public_key, registered_at FROM node_keys
		WHERE node = $1 ORDER BY version DESC LIMIT 1`, node).Scan(&k.Version, &k.PublicKey, &k.RegisteredAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("node %q has registered no key: %w", node, driver.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	k.RegisteredAt = k.RegisteredAt.UTC()
	return k, nil
}

// nodeKey is journal.BindKeys' lookup: the node's current public key, nil
// when it has none.
func nodeKey(ctx context.Context, conn *pgxpool.Conn, node string) ([]byte, error) {
	k, err := currentNodeKey(ctx, conn, node)
	if errors.Is(err, driver.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the key of node %q: %w", node, err)
	}
	return bytes.Clone(k.PublicKey), nil
}
