package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// HomeJoin implements driver.Driver: one upsert on the critical pool,
// expiry at store now + term computed by the server (or the StoreClock).
func (d *store) HomeJoin(ctx context.Context, p *driver.HomeJoinParams) (*driver.HomeReplica, error) {
	fail := func(err error) error {
		return fmt.Errorf("postgres: home join %s/%s: %w", p.Pool, p.Node, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	r := &driver.HomeReplica{Pool: p.Pool, Node: p.Node}
	err = conn.QueryRow(ctx, `INSERT INTO home_replicas (pool, node, expires_at)
		VALUES ($1, $2, coalesce($3::timestamptz, clock_timestamp()) + $4::bigint * interval '1 microsecond')
		ON CONFLICT (pool, node) DO UPDATE SET expires_at = excluded.expires_at
		RETURNING expires_at`, p.Pool, p.Node, d.fakeNow(), int64(p.Term/time.Microsecond)).Scan(&r.ExpiresAt)
	if err != nil {
		return nil, fail(mapWriteError(err))
	}
	r.ExpiresAt = r.ExpiresAt.UTC()
	return r, nil
}

// HomeLeave implements driver.Driver.
func (d *store) HomeLeave(ctx context.Context, p *driver.HomeLeaveParams) error {
	fail := func(err error) error {
		return fmt.Errorf("postgres: home leave %s/%s: %w", p.Pool, p.Node, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return fail(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `DELETE FROM home_replicas WHERE pool = $1 AND node = $2`, p.Pool, p.Node); err != nil {
		return fail(err)
	}
	return nil
}

// HomeLive implements driver.Driver: a read on the general pool.
func (d *store) HomeLive(ctx context.Context, p *driver.HomeLiveParams) ([]driver.HomeReplica, error) {
	fail := func(err error) error { return fmt.Errorf("postgres: home live %s: %w", p.Pool, withCtx(ctx, err)) }
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT node, expires_at FROM home_replicas
		WHERE pool = $1 AND expires_at > coalesce($2::timestamptz, clock_timestamp())
		ORDER BY node`, p.Pool, d.fakeNow())
	if err != nil {
		return nil, fail(err)
	}
	defer rows.Close()
	out, err := driver.CollectRows(rows, func() (driver.HomeReplica, error) {
		r := driver.HomeReplica{Pool: p.Pool}
		err := rows.Scan(&r.Node, &r.ExpiresAt)
		r.ExpiresAt = r.ExpiresAt.UTC()
		return r, err
	})
	if err != nil {
		return nil, fail(err)
	}
	return out, nil
}
