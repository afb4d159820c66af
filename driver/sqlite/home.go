package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// HomeJoin implements driver.Driver: one upsert on the writer (a
// SyncCritical write, fsynced at commit), expiry at store now + term.
func (d *store) HomeJoin(ctx context.Context, p *driver.HomeJoinParams) (*driver.HomeReplica, error) {
	exp := d.clock.Now().UnixMicro() + int64(p.Term/time.Microsecond)
	_, err := d.w.ExecContext(ctx, `INSERT INTO home_replicas (pool, node, expires_at) VALUES (?1, ?2, ?3)
		ON CONFLICT (pool, node) DO UPDATE SET expires_at = excluded.expires_at`, p.Pool, p.Node, exp)
	if err != nil {
		return nil, fmt.Errorf("sqlite: home join %s/%s: %w", p.Pool, p.Node, err)
	}
	return &driver.HomeReplica{Pool: p.Pool, Node: p.Node, ExpiresAt: fromMicros(exp)}, nil
}

// HomeLeave implements driver.Driver.
func (d *store) HomeLeave(ctx context.Context, p *driver.HomeLeaveParams) error {
	if _, err := d.w.ExecContext(ctx, `DELETE FROM home_replicas WHERE pool = ?1 AND node = ?2`, p.Pool, p.Node); err != nil {
		return fmt.Errorf("sqlite: home leave %s/%s: %w", p.Pool, p.Node, err)
	}
	return nil
}

// HomeLive implements driver.Driver, on the read pool.
func (d *store) HomeLive(ctx context.Context, p *driver.HomeLiveParams) ([]driver.HomeReplica, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT node, expires_at FROM home_replicas
		WHERE pool = ?1 AND expires_at > ?2 ORDER BY node`, p.Pool, d.clock.Now().UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("sqlite: home live %s: %w", p.Pool, err)
	}
	defer rows.Close()
	out, err := driver.CollectRows(rows, func() (driver.HomeReplica, error) {
		r := driver.HomeReplica{Pool: p.Pool}
		var us int64
		err := rows.Scan(&r.Node, &us)
		r.ExpiresAt = fromMicros(us)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: home live %s: %w", p.Pool, err)
	}
	return out, nil
}
