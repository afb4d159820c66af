package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

// Event list bounds.
const (
	defaultEventListLimit = 1000
	maxEventListLimit     = 10000
)

// validateEvents checks a whole batch before any write and returns the
// events' payloads in compact form (the caller's slices are left alone).
// One invalid event refuses the batch; the error names its index.
func validateEvents(evs []driver.RunEventInsert) ([][]byte, error) {
	payloads := make([][]byte, len(evs))
	for i := range evs {
		ev := &evs[i]
		err := runs.ValidateFenced(ev.RunID, ev.Fence)
		if err == nil && ev.Seq <= 0 {
			err = &journal.InputError{Field: "seq", Problem: fmt.Sprintf("%d is not a sequence number (they start at 1)", ev.Seq)}
		}
		if err == nil {
			err = journal.ValidateID("kind", ev.Kind)
		}
		if err == nil {
			payloads[i], err = runs.NormalizePayload("payload", ev.Payload)
		}
		if err != nil {
			var ie *journal.InputError
			if errors.As(err, &ie) {
				return nil, &journal.InputError{Field: ie.Field, Problem: fmt.Sprintf("event %d of the batch: %s", i, ie.Problem)}
			}
			return nil, err
		}
	}
	return payloads, nil
}

// RunEventAppend implements driver.EffectStore: the whole batch is one
// BEGIN IMMEDIATE transaction (one fsync), whatever runs it spans. Each
// event is one prepared INSERT … SELECT … WHERE <run held under the event's
// fence> ON CONFLICT DO NOTHING. Only an event that inserted nothing costs a
// second query, which tells a duplicate (its key is present: a retried
// batch, accepted) from a fenced one (reported by index). The accepted
// events of a batch commit even when others are fenced.
func (d *Driver) RunEventAppend(ctx context.Context, p *driver.RunEventAppendParams) (*driver.RunEventAppendResult, error) {
	payloads, err := validateEvents(p.Events)
	if err != nil {
		return nil, err
	}
	var out driver.RunEventAppendResult
	if len(p.Events) == 0 {
		return &out, nil
	}
	const what = "appending run events"
	err = d.inWriteTx(ctx, what, func(tx *sql.Tx, st *effectStmts, now time.Time) error {
		insert := tx.StmtContext(ctx, st.insertEvent)
		var exists *sql.Stmt // bound on the first event that inserted nothing
		created := now.UnixMicro()
		for i := range p.Events {
			ev := &p.Events[i]
			res, err := insert.ExecContext(ctx, ev.RunID, ev.Fence, ev.Seq, ev.Kind, payloads[i], created)
			if err != nil {
				return fmt.Errorf("sqlite: %s: event %d (run %d, fence %d, seq %d): %w", what, i, ev.RunID, ev.Fence, ev.Seq, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("sqlite: %s: event %d: %w", what, i, err)
			}
			if n > 0 {
				continue
			}
			if exists == nil {
				exists = tx.StmtContext(ctx, st.eventExists)
			}
			var present bool
			if err := exists.QueryRowContext(ctx, ev.RunID, ev.Fence, ev.Seq).Scan(&present); err != nil {
				return fmt.Errorf("sqlite: %s: event %d: %w", what, i, err)
			}
			if !present {
				out.Fenced = append(out.Fenced, i)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// RunEventList implements driver.EffectStore, on the read pool: a run's
// events after (AfterFence, AfterSeq) in (fence, seq) order, the primary
// key's order. Limit 0 means 1000; at most 10000. No run, or no events,
// gives none.
func (d *Driver) RunEventList(ctx context.Context, p *driver.RunEventListParams) ([]*driver.RunEvent, error) {
	if err := validateRunID(p.RunID); err != nil {
		return nil, err
	}
	if p.AfterFence < 0 || p.AfterSeq < 0 {
		return nil, &journal.InputError{Field: "after", Problem: fmt.Sprintf("(%d, %d) is below (0, 0)", p.AfterFence, p.AfterSeq)}
	}
	if p.Limit < 0 || p.Limit > maxEventListLimit {
		return nil, &journal.InputError{Field: "limit", Problem: fmt.Sprintf("%d is outside 0..%d", p.Limit, maxEventListLimit)}
	}
	limit := p.Limit
	if limit == 0 {
		limit = defaultEventListLimit
	}
	rows, err := d.r.QueryContext(ctx, `SELECT run_id, fence, seq, kind, payload, created_at FROM run_events
WHERE run_id = ?1 AND (fence, seq) > (?2, ?3)
ORDER BY fence, seq
LIMIT ?4`, p.RunID, p.AfterFence, p.AfterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing events of run %d: %w", p.RunID, err)
	}
	defer rows.Close()
	var out []*driver.RunEvent
	for rows.Next() {
		var ev driver.RunEvent
		var created int64
		if err := rows.Scan(&ev.RunID, &ev.Fence, &ev.Seq, &ev.Kind, &ev.Payload, &created); err != nil {
			return nil, fmt.Errorf("sqlite: listing events of run %d: %w", p.RunID, err)
		}
		ev.CreatedAt = fromMicros(created)
		out = append(out, &ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: listing events of run %d: %w", p.RunID, err)
	}
	return out, nil
}
