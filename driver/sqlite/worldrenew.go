package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

// WorldRenewMany implements driver.Driver: a drain that only confirms reads
// the heads on the read pool; one that extends is one BEGIN IMMEDIATE
// transaction (one fsync) with every extension's conditional head write.
func (d *store) WorldRenewMany(ctx context.Context, p *driver.WorldRenewManyParams) ([]driver.WorldRenewOutcome, error) {
	out := make([]driver.WorldRenewOutcome, len(p.Worlds))
	extend := false
	for i := range p.Worlds {
		extend = extend || p.Worlds[i].Extend
	}
	if !extend {
		now := d.clock.Now()
		for i := range p.Worlds {
			r := &p.Worlds[i]
			w, err := getWorld(ctx, d.r, r.World)
			if errors.Is(err, driver.ErrNotFound) {
				out[i].Err = err
				continue
			}
			if err != nil {
				return nil, err
			}
			_, err = driver.RenewOutcome(p.Holder, r, w, now)
			out[i] = driver.WorldRenewOutcome{World: w, Err: err}
		}
		return out, nil
	}
	fail := func(err error) ([]driver.WorldRenewOutcome, error) {
		return nil, fmt.Errorf("sqlite: renewing %d worlds of %s: %w", len(p.Worlds), p.Holder, err)
	}
	st, err := d.prepared(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	now := d.clock.Now()
	for i := range p.Worlds {
		r := &p.Worlds[i]
		w, err := scanWorld(tx.StmtContext(ctx, st.selectWorld).QueryRowContext(ctx, r.World))
		if errors.Is(err, sql.ErrNoRows) {
			out[i].Err = fmt.Errorf("world %q: %w", r.World, driver.ErrNotFound)
			continue
		}
		if err != nil {
			return fail(err)
		}
		plan, err := driver.RenewOutcome(p.Holder, r, w, now)
		if err != nil || plan.Empty() {
			out[i] = driver.WorldRenewOutcome{World: w, Err: err}
			continue
		}
		if err := d.writePlan(ctx, tx, st, nil, &plan); err != nil {
			return fail(err)
		}
		after := *w
		after.State = plan.After
		out[i].World = &after
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return out, nil
}
