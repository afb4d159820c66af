package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// JournalAppend implements driver.Driver: the whole batch is one
// transaction (one commit, one WAL flush) on the general pool, in two
// round trips (see change).
func (d *Driver) JournalAppend(ctx context.Context, p *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	var out []journal.AppendOutcome
	r := changeReq{world: p.World, op: "append", critical: critical(p), holders: distinctHolders(p.Requests)}
	_, err := d.change(ctx, r, func(w *driver.World, now time.Time, rejected func(string) bool) (journal.Plan, error) {
		var plan journal.Plan
		plan, out = journal.PlanAppend(w.State, now, p.Requests, rejected)
		return plan, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// distinctHolders are the holders whose rejection markers the planner may
// ask about, read in round trip 1 so the planner never waits on the store.
// Invalid holders are left out: the planner refuses their requests before
// it asks.
func distinctHolders(reqs []journal.AppendRequest) []string {
	if len(reqs) == 1 && journal.ValidateID("holder", reqs[0].Holder) == nil {
		return []string{reqs[0].Holder}
	}
	seen := make(map[string]bool, len(reqs))
	var out []string
	for i := range reqs {
		if h := reqs[i].Holder; !seen[h] && journal.ValidateID("holder", h) == nil {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// JournalRead implements driver.Driver.
func (d *Driver) JournalRead(ctx context.Context, p *driver.JournalReadParams) ([]journal.Entry, error) {
	if err := driver.ValidateRead(p); err != nil {
		return nil, err
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 1000
	}
	out, err := d.readEntries(ctx, p, limit)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 { // an empty range of a missing world is ErrNotFound
		if _, err := d.WorldGet(ctx, &driver.WorldGetParams{World: p.World}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readEntries holds its connection only for the query, so the existence
// check after an empty read takes a connection of its own without holding
// two (which starves the pool under concurrent tail reads).
func (d *Driver) readEntries(ctx context.Context, p *driver.JournalReadParams, limit int) ([]journal.Entry, error) {
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading journal %q: %w", p.World, err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT world, position, epoch, kind, holder, key, payload, store_time,
		prev_hash, hash, signature FROM journal_entries WHERE world = $1 AND position >= $2 ORDER BY position LIMIT $3`,
		p.World, p.From, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading journal %q: %w", p.World, err)
	}
	defer rows.Close()
	var out []journal.Entry
	for rows.Next() {
		var e journal.Entry
		var kind string
		if err := rows.Scan(&e.World, &e.Position, &e.Epoch, &kind, &e.Holder, &e.Key, &e.Payload, &e.StoreTime,
			&e.PrevHash, &e.Hash, &e.Signature); err != nil {
			return nil, fmt.Errorf("postgres: reading journal %q: %w", p.World, err)
		}
		e.Kind, e.StoreTime = journal.Kind(kind), e.StoreTime.UTC()
		if len(e.PrevHash) == 0 {
			e.PrevHash = nil
		}
		if len(e.Signature) == 0 {
			e.Signature = nil
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: reading journal %q: %w", p.World, err)
	}
	return out, nil
}
