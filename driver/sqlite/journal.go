package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// JournalAppend implements driver.Driver: the whole batch is one BEGIN
// IMMEDIATE transaction and so one fsync.
func (d *store) JournalAppend(ctx context.Context, p *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	var out []journal.AppendOutcome
	_, err := d.change(ctx, p.World, "append", func(w *driver.World, now time.Time, rejected func(string) bool) (journal.Plan, error) {
		var plan journal.Plan
		plan, out = journal.PlanAppend(w.State, now, p.Requests, rejected)
		return plan, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// JournalRead implements driver.Driver.
func (d *store) JournalRead(ctx context.Context, p *driver.JournalReadParams) ([]journal.Entry, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 1000
	}
	rows, err := d.r.QueryContext(ctx, `SELECT world, position, epoch, kind, holder, key, payload, store_time,
		prev_hash, hash, signature FROM journal_entries WHERE world = ? AND position >= ? ORDER BY position LIMIT ?`,
		p.World, p.From, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading journal %q: %w", p.World, err)
	}
	defer rows.Close()
	var out []journal.Entry
	for rows.Next() {
		var e journal.Entry
		var kind string
		var st int64
		if err := rows.Scan(&e.World, &e.Position, &e.Epoch, &kind, &e.Holder, &e.Key, &e.Payload, &st,
			&e.PrevHash, &e.Hash, &e.Signature); err != nil {
			return nil, fmt.Errorf("sqlite: reading journal %q: %w", p.World, err)
		}
		e.Kind, e.StoreTime = journal.Kind(kind), fromMicros(st)
		if len(e.PrevHash) == 0 {
			e.PrevHash = nil
		}
		if len(e.Signature) == 0 {
			e.Signature = nil
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: reading journal %q: %w", p.World, err)
	}
	rows.Close()       // give the read connection back before the existence check takes one
	if len(out) == 0 { // an empty range of a missing world is ErrNotFound
		if _, err := d.WorldGet(ctx, &driver.WorldGetParams{World: p.World}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
