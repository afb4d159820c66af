package leaseholdtest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/runs"
)

// EnqueuedOpts narrows which runs match. Zero fields match anything.
type EnqueuedOpts struct {
	// Payload lists fields of the run's JSON payload (an object) and
	// their values; each must be present and equal, compared as JSON.
	// Fields not listed are not compared.
	Payload map[string]any
	// State, when set, is the state the run must be in.
	State runs.State
	// Priority, when set, is the priority the run must have.
	Priority *int
	// UniqueKey, when set, is the unique key the run must carry.
	UniqueKey string
}

// match says why r does not match o ("" when it does).
func (o *EnqueuedOpts) match(r *leasehold.Run) string {
	if o == nil {
		return ""
	}
	if o.State != "" && r.State != o.State {
		return fmt.Sprintf("state %s, want %s", r.State, o.State)
	}
	if o.Priority != nil && r.Priority != *o.Priority {
		return fmt.Sprintf("priority %d, want %d", r.Priority, *o.Priority)
	}
	if o.UniqueKey != "" && r.UniqueKey != o.UniqueKey {
		return fmt.Sprintf("unique key %q, want %q", r.UniqueKey, o.UniqueKey)
	}
	if len(o.Payload) == 0 {
		return ""
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(r.Payload, &got); err != nil {
		return fmt.Sprintf("payload %s is not a JSON object", r.Payload)
	}
	for k, want := range o.Payload {
		g, ok := got[k]
		if !ok {
			return fmt.Sprintf("payload has no field %q", k)
		}
		if !sameJSON(g, want) {
			return fmt.Sprintf("payload field %q is %s, want %v", k, g, want)
		}
	}
	return ""
}

// sameJSON compares a stored JSON value with a Go value as JSON: both
// decoded and encoded again (object keys sorted, numbers as written).
func sameJSON(raw json.RawMessage, want any) bool {
	w, err := json.Marshal(want)
	if err != nil {
		return false
	}
	canon := func(b []byte) []byte {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return nil
		}
		out, _ := json.Marshal(v)
		return out
	}
	a, b := canon(raw), canon(w)
	return a != nil && bytes.Equal(a, b)
}

// find returns the newest run of rs matching o, and a description of
// those that did not.
func find(rs []*leasehold.Run, o *EnqueuedOpts) (*leasehold.Run, string) {
	var why []string
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		if m := o.match(r); m == "" {
			return r, ""
		} else if len(why) < 10 {
			why = append(why, fmt.Sprintf("  run %d: %s", r.ID, m))
		}
	}
	if len(rs) == 0 {
		return nil, "  (no runs in the queue)"
	}
	return nil, strings.Join(why, "\n")
}

// queueRuns lists every run of queue through the client, ascending by id.
func queueRuns(ctx context.Context, c *leasehold.Client, queue string) ([]*leasehold.Run, error) {
	var all []*leasehold.Run
	for after := int64(0); ; {
		page, err := c.Runs(ctx, leasehold.RunsFilter{Queue: queue, After: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < 1000 {
			return all, nil
		}
		after = page[len(page)-1].ID
	}
}

// RequireEnqueued fails t unless a run of queue matching opts exists
// (committed), and returns the newest such run.
func RequireEnqueued(ctx context.Context, t T, c *leasehold.Client, queue string, opts *EnqueuedOpts) *leasehold.Run {
	t.Helper()
	rs, err := queueRuns(ctx, c, queue)
	if err != nil {
		t.Errorf("leaseholdtest: listing the runs of %q: %v", queue, err)
		t.FailNow()
	}
	r, why := find(rs, opts)
	if r == nil {
		t.Errorf("leaseholdtest: no run of queue %q matches:\n%s", queue, why)
		t.FailNow()
	}
	return r
}

// RequireNotEnqueued fails t if a run of queue matching opts exists.
func RequireNotEnqueued(ctx context.Context, t T, c *leasehold.Client, queue string, opts *EnqueuedOpts) {
	t.Helper()
	rs, err := queueRuns(ctx, c, queue)
	if err != nil {
		t.Errorf("leaseholdtest: listing the runs of %q: %v", queue, err)
		t.FailNow()
	}
	if r, _ := find(rs, opts); r != nil {
		t.Errorf("leaseholdtest: run %d of queue %q matches, want none", r.ID, queue)
		t.FailNow()
	}
}

// RequireEnqueuedTx is RequireEnqueued read through the caller's own
// transaction tx — a pgx.Tx on Postgres, a *sql.Tx on SQLite, as
// Client.EnqueueTx takes — so it sees the runs that transaction enqueued
// before it commits (and nobody else does). The run it returns carries
// the columns compared (id, queue, payload, priority, state, unique key).
func RequireEnqueuedTx(ctx context.Context, t T, tx any, queue string, opts *EnqueuedOpts) *leasehold.Run {
	t.Helper()
	rs, err := queueRunsTx(ctx, tx, queue)
	if err != nil {
		t.Errorf("leaseholdtest: listing the runs of %q in the transaction: %v", queue, err)
		t.FailNow()
	}
	r, why := find(rs, opts)
	if r == nil {
		t.Errorf("leaseholdtest: no run of queue %q matches in the transaction:\n%s", queue, why)
		t.FailNow()
	}
	return r
}

const runsInQueueTx = `SELECT id, queue, payload, priority, state, unique_key FROM runs WHERE queue = `

func queueRunsTx(ctx context.Context, tx any, queue string) ([]*leasehold.Run, error) {
	var out []*leasehold.Run
	scan := func(next func() bool, sc func(...any) error) error {
		for next() {
			r := &leasehold.Run{}
			var st string
			if err := sc(&r.ID, &r.Queue, &r.Payload, &r.Priority, &st, &r.UniqueKey); err != nil {
				return err
			}
			r.State = runs.State(st)
			out = append(out, r)
		}
		return nil
	}
	switch tx := tx.(type) {
	case pgx.Tx:
		rows, err := tx.Query(ctx, runsInQueueTx+`$1 ORDER BY id`, queue)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		if err := scan(rows.Next, rows.Scan); err != nil {
			return nil, err
		}
		return out, rows.Err()
	case *sql.Tx:
		rows, err := tx.QueryContext(ctx, runsInQueueTx+`? ORDER BY id`, queue)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		if err := scan(rows.Next, rows.Scan); err != nil {
			return nil, err
		}
		return out, rows.Err()
	}
	return nil, fmt.Errorf("a transaction of type %T: want a pgx.Tx or a *sql.Tx", tx)
}
