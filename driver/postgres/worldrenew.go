package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// WorldRenewMany implements driver.Driver in two round trips on the
// reserved pool, whatever the number of worlds:
//
//  1. BEGIN; lock the heads to extend (in id order, so two drains cannot
//     deadlock; every other writer locks one head); read the heads only
//     confirmed, without a lock; read the store clock;
//  2. one conditional head write per extension (writePlan); COMMIT.
//
// The plans are made in Go between them (driver.RenewOutcome), as a lease
// change's are.
func (d *store) WorldRenewMany(ctx context.Context, p *driver.WorldRenewManyParams) (_ []driver.WorldRenewOutcome, err error) {
	fail := func(err error) ([]driver.WorldRenewOutcome, error) {
		return nil, fmt.Errorf("postgres: renewing %d worlds of %s: %w", len(p.Worlds), p.Holder, withCtx(ctx, err))
	}
	var ext, conf []string
	for i := range p.Worlds {
		if p.Worlds[i].Extend {
			ext = append(ext, p.Worlds[i].World)
		} else {
			conf = append(conf, p.Worlds[i].World)
		}
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return fail(err)
	}
	defer conn.Release()
	defer d.endTx(ctx, conn)

	heads := make(map[string]*driver.World, len(p.Worlds))
	var now time.Time
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(`SELECT `+worldColumns+` FROM worlds WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`, nonNilStrings(ext))
	b.Queue(`SELECT `+worldColumns+` FROM worlds WHERE id = ANY($1::text[])`, nonNilStrings(conf))
	if d.clock == nil {
		b.Queue(readClock)
	}
	if err := func() error {
		br := conn.SendBatch(ctx, b)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return err
		}
		for range 2 {
			rows, err := br.Query()
			if err != nil {
				return err
			}
			ws, err := driver.CollectRows(rows, func() (*driver.World, error) { return scanWorld(rows) })
			if err != nil {
				return err
			}
			for _, w := range ws {
				heads[w.World] = w
			}
		}
		if d.clock == nil {
			return br.QueryRow().Scan(&now)
		}
		return nil
	}(); err != nil {
		return fail(err)
	}
	if d.clock != nil {
		now = d.clock.Now()
	}
	out := make([]driver.WorldRenewOutcome, len(p.Worlds))
	var plans []*journal.Plan
	var planned []int
	for i := range p.Worlds {
		r := &p.Worlds[i]
		w, ok := heads[r.World]
		if !ok {
			out[i].Err = fmt.Errorf("world %q: %w", r.World, driver.ErrNotFound)
			continue
		}
		plan, err := driver.RenewOutcome(p.Holder, r, w, now)
		out[i] = driver.WorldRenewOutcome{World: w, Err: err}
		if err == nil && !plan.Empty() {
			plans, planned = append(plans, &plan), append(planned, i)
		}
	}
	if len(plans) == 0 {
		return out, nil // endTx rolls the read-only transaction back
	}
	b = &pgx.Batch{}
	for _, plan := range plans {
		b.Queue(writePlan, planArgs(plan)...)
	}
	b.Queue("COMMIT")
	br := conn.SendBatch(ctx, b)
	defer func() {
		if cerr := br.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	for range plans {
		var n int64
		if err := br.QueryRow().Scan(&n); err != nil {
			return fail(mapWriteError(err))
		}
		if n != 1 {
			return fail(errCondFailed)
		}
	}
	if _, err := br.Exec(); err != nil {
		return fail(fmt.Errorf("commit: %w", err))
	}
	for k, i := range planned {
		after := *out[i].World
		after.State = plans[k].After
		out[i].World = &after
	}
	return out, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
