package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/leasehold/leasehold/driver"
)

// RunEventAppend implements driver.EffectStore: the whole batch is one
// BEGIN IMMEDIATE transaction (one fsync), whatever runs it spans. Events
// go in eventChunk at a time with one prepared eventInsertChunkSQL, a
// multi-row INSERT … SELECT that keeps only the events whose run is held
// under their fence, OR IGNORE; a tail shorter than eventChunkMin goes in
// event by event with eventInsertSQL, the same statement for one event.
// Each event's id is its place in the queue-wide order (eventID). Only a
// chunk (or event) that inserted fewer rows than it had costs more
// queries: each of its events is looked up, telling a duplicate (its key
// is present: a retried batch, accepted) from a fenced one (reported by
// index). The accepted events of a batch commit even when others are
// fenced.
func (d *store) RunEventAppend(ctx context.Context, p *driver.RunEventAppendParams) (*driver.RunEventAppendResult, error) {
	// Valid, payloads compact: driver.Validating.
	payloads := make([][]byte, len(p.Events))
	for i := range p.Events {
		payloads[i] = p.Events[i].Payload
	}
	var out driver.RunEventAppendResult
	if len(p.Events) == 0 {
		return &out, nil
	}
	order := eventOrder(p.Events)
	positions := int64(1 + (len(p.Events)-1)>>eventPosShift)
	const what = "appending run events"
	err := d.inWriteTx(ctx, what, func(tx *sql.Tx, st *effectStmts, now time.Time) error {
		var last int64
		if err := tx.StmtContext(ctx, st.eventPosition).QueryRowContext(ctx, positions).Scan(&last); err != nil {
			return fmt.Errorf("sqlite: %s: taking the position: %w", what, err)
		}
		w := eventWriter{ctx: ctx, tx: tx, st: st, evs: p.Events, payloads: payloads,
			created: now.UnixMicro(), first: last - positions + 1, order: order, out: &out}
		for c := 0; c < len(p.Events); c += eventChunk {
			to := min(c+eventChunk, len(p.Events))
			var err error
			if to-c < eventChunkMin {
				err = w.each(c, to)
			} else {
				err = w.chunk(c, to)
			}
			if err != nil {
				return fmt.Errorf("sqlite: %s: %w", what, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out.Fenced)     // found in (run, fence, seq) order; reported by index
	d.notifier.notify(p.Events) // committed: wake this process's subscribers (notify.go)
	return &out, nil
}

// eventWriter writes one RunEventAppend batch inside its transaction.
type eventWriter struct {
	ctx      context.Context
	tx       *sql.Tx
	st       *effectStmts
	evs      []driver.RunEventInsert
	payloads [][]byte
	created  int64 // the store time, Unix microseconds
	first    int64 // the transaction's first position in the queue-wide order (eventPositionSQL)
	order    []int // the batch's indexes in (run, fence, seq) order, the order they go in (eventOrder)
	out      *driver.RunEventAppendResult

	insert, insertChunk, exists *sql.Stmt // bound to tx on first use
	chunkArgs                   []any
}

// chunk inserts events [from, to), at most eventChunk of them, with one
// eventInsertChunkSQL; if it inserted fewer rows, it classifies each.
func (w *eventWriter) chunk(from, to int) error {
	if w.insertChunk == nil {
		w.insertChunk = w.tx.StmtContext(w.ctx, w.st.insertEventChunk)
		w.chunkArgs = make([]any, 2+5*eventChunk)
		w.chunkArgs[1] = w.created
	}
	w.chunkArgs[0] = eventID(w.first, from)
	for k := range eventChunk {
		a := w.chunkArgs[2+5*k : 7+5*k]
		if j := from + k; j < to {
			i := w.order[j]
			ev := &w.evs[i]
			a[0], a[1], a[2], a[3], a[4] = ev.RunID, ev.Fence, ev.Seq, ev.Kind, w.payloads[i]
		} else {
			a[0], a[1], a[2], a[3], a[4] = nil, nil, nil, nil, nil
		}
	}
	res, err := w.insertChunk.ExecContext(w.ctx, w.chunkArgs...)
	if err != nil {
		return fmt.Errorf("events %d to %d of %d: %w", from, to-1, len(w.evs), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("events %d to %d of %d: %w", from, to-1, len(w.evs), err)
	}
	if n == int64(to-from) {
		return nil
	}
	for j := from; j < to; j++ {
		if err := w.classify(w.order[j]); err != nil {
			return err
		}
	}
	return nil
}

// each inserts events [from, to) one by one with eventInsertSQL,
// classifying each that inserted nothing.
func (w *eventWriter) each(from, to int) error {
	if w.insert == nil {
		w.insert = w.tx.StmtContext(w.ctx, w.st.insertEvent)
	}
	for j := from; j < to; j++ {
		i := w.order[j]
		ev := &w.evs[i]
		res, err := w.insert.ExecContext(w.ctx, eventID(w.first, j), ev.RunID, ev.Fence, ev.Seq, ev.Kind, w.payloads[i], w.created)
		if err != nil {
			return fmt.Errorf("event %d (run %d, fence %d, seq %d): %w", i, ev.RunID, ev.Fence, ev.Seq, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
		if n > 0 {
			continue
		}
		if err := w.classify(i); err != nil {
			return err
		}
	}
	return nil
}

// classify reports event i as fenced unless its key is present: after the
// insert, an event is present if it was inserted now or before (a retried
// batch, or a key repeated within the batch), absent only if its run was
// not held under its fence.
func (w *eventWriter) classify(i int) error {
	if w.exists == nil {
		w.exists = w.tx.StmtContext(w.ctx, w.st.eventExists)
	}
	ev := &w.evs[i]
	var present bool
	if err := w.exists.QueryRowContext(w.ctx, ev.RunID, ev.Fence, ev.Seq).Scan(&present); err != nil {
		return fmt.Errorf("event %d: %w", i, err)
	}
	if !present {
		w.out.Fenced = append(w.out.Fenced, i)
	}
	return nil
}

// RunEventListQueue implements driver.QueueEventLister, on the read
// pool: the queue's events after the cursor in (pos, run, fence, seq)
// order — the table's own id order (eventID) — a range scan of the table
// from the cursor's position, each event's run read by its key for the
// queue (CROSS JOIN keeps that loop order: the table outside, in id
// order, no sort). Every committed position is final (eventPositionSQL),
// so nothing is held back.
func (d *store) RunEventListQueue(ctx context.Context, p *driver.RunEventListQueueParams) (*driver.QueueEventPage, error) {
	a := p.After
	if a.Pos > maxEventPos {
		return &driver.QueueEventPage{}, nil // past every position an id can hold
	}
	from := int64(math.MinInt64) // position 0: the events stored before positions too (negative ids)
	if a.Pos > 0 {
		from = eventID(a.Pos, 0)
	}
	rows, err := d.r.QueryContext(ctx, listQueueEventsSQL, from, p.Queue, a.Pos, a.RunID, a.Fence, a.Seq, p.Limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: listing events of queue %q: %w", p.Queue, err)
	}
	defer rows.Close()
	var out []*driver.QueueEvent
	for rows.Next() {
		var ev driver.QueueEvent
		var created int64
		if err := rows.Scan(&ev.Pos, &ev.RunID, &ev.Fence, &ev.Seq, &ev.Kind, &ev.Payload, &created); err != nil {
			return nil, fmt.Errorf("sqlite: listing events of queue %q: %w", p.Queue, err)
		}
		ev.CreatedAt = fromMicros(created)
		out = append(out, &ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: listing events of queue %q: %w", p.Queue, err)
	}
	return &driver.QueueEventPage{Events: out}, nil
}

// RunEventList implements driver.EffectStore, on the read pool: a run's
// events after (AfterFence, AfterSeq) in (fence, seq) order, the primary
// key's order. Limit 0 means 1000; at most 10000. No run, or no events,
// gives none.
func (d *store) RunEventList(ctx context.Context, p *driver.RunEventListParams) ([]*driver.RunEvent, error) {
	limit := p.Limit // > 0: defaulted by driver.Validating
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
