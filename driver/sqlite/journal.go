package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// JournalAppend implements driver.Driver: the whole batch is one BEGIN
// IMMEDIATE transaction and so one fsync. A key already appended to the
// world is looked up inside it (journal_entries_key, migration 0004), so
// a retried append answers the first entry's position.
func (d *store) JournalAppend(ctx context.Context, p *driver.JournalAppendParams) ([]journal.AppendOutcome, error) {
	var out []journal.AppendOutcome
	keyless := true
	for i := range p.Requests {
		keyless = keyless && p.Requests[i].Key == ""
	}
	_, err := d.change(ctx, p.World, "append", keyless, func(w *driver.World, now time.Time, q *headQueries) (journal.Plan, error) {
		var plan journal.Plan
		var keys []string
		for i := range p.Requests {
			if k := p.Requests[i].Key; k != "" {
				keys = append(keys, k)
			}
		}
		if len(keys) > 1 {
			q.prefetch(keys)
		}
		plan, out = journal.PlanAppendKeyed(w.State, now, p.Requests, q.rejected, q.appended)
		return plan, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// JournalRead implements driver.Driver.
func (d *store) JournalRead(ctx context.Context, p *driver.JournalReadParams) ([]journal.Entry, error) {
	limit := p.Limit // > 0: defaulted by driver.Validating
	rows, err := d.r.QueryContext(ctx, `SELECT `+driver.EntryColumns+` FROM journal_entries WHERE world = ? AND position >= ? ORDER BY position LIMIT ?`,
		p.World, p.From, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading journal %q: %w", p.World, err)
	}
	defer rows.Close()
	out, err := driver.CollectRows(rows, func() (journal.Entry, error) { return driver.ScanEntry(rows.Scan, fromMicros) })
	if err != nil {
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
