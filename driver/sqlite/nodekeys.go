package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

// NodeKeyRegister implements driver.Driver: one transaction on the writer
// reads the current version and, unless it is the same key or a retired
// one, inserts the next.
func (d *store) NodeKeyRegister(ctx context.Context, p *driver.NodeKeyRegisterParams) (*driver.NodeKey, error) {
	fail := func(err error) (*driver.NodeKey, error) {
		return nil, fmt.Errorf("sqlite: registering the key of node %q: %w", p.Node, err)
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	cur, err := currentNodeKey(ctx, tx, p.Node)
	switch {
	case err == nil && bytes.Equal(cur.PublicKey, p.PublicKey):
		return cur, nil
	case err != nil && !errors.Is(err, driver.ErrNotFound):
		return fail(err)
	}
	if cur != nil {
		var old int64
		err := tx.QueryRowContext(ctx, `SELECT version FROM node_keys WHERE node = ? AND public_key = ? ORDER BY version DESC LIMIT 1`,
			p.Node, p.PublicKey).Scan(&old)
		switch {
		case err == nil:
			return fail(&driver.KeyRetiredError{Node: p.Node, Version: old, Current: cur.Version})
		case !errors.Is(err, sql.ErrNoRows):
			return fail(err)
		}
	}
	k := &driver.NodeKey{Node: p.Node, Version: 1, PublicKey: bytes.Clone(p.PublicKey), RegisteredAt: fromMicros(d.clock.Now().UnixMicro())}
	if cur != nil {
		k.Version = cur.Version + 1
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO node_keys (node, version, public_key, registered_at) VALUES (?, ?, ?, ?)`,
		k.Node, k.Version, k.PublicKey, k.RegisteredAt.UnixMicro()); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return k, nil
}

// NodeKeyGet implements driver.Driver.
func (d *store) NodeKeyGet(ctx context.Context, p *driver.NodeKeyGetParams) (*driver.NodeKey, error) {
	k, err := currentNodeKey(ctx, d.r, p.Node)
	if err != nil && !errors.Is(err, driver.ErrNotFound) {
		return nil, fmt.Errorf("sqlite: reading the key of node %q: %w", p.Node, err)
	}
	return k, err
}

func currentNodeKey(ctx context.Context, q queryer, node string) (*driver.NodeKey, error) {
	k := &driver.NodeKey{Node: node}
	var at int64
	err := q.QueryRowContext(ctx, `SELECT version, public_key, registered_at FROM node_keys
		WHERE node = ? ORDER BY version DESC LIMIT 1`, node).Scan(&k.Version, &k.PublicKey, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("node %q has registered no key: %w", node, driver.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	k.RegisteredAt = fromMicros(at)
	return k, nil
}

// nodeKey is journal.BindKeys' lookup: the node's current public key, nil
// when it has none.
func nodeKey(ctx context.Context, q queryer, node string) ([]byte, error) {
	k, err := currentNodeKey(ctx, q, node)
	if errors.Is(err, driver.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the key of node %q: %w", node, err)
	}
	return k.PublicKey, nil
}
