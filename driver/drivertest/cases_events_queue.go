package drivertest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// A queue's events in commit order (driver.QueueEventLister): the read
// behind the queue-wide event stream.

// listQueue lists queue's events after cursor, limit at a time (0: the
// default page).
func (e *env) listQueue(queue string, after driver.QueueEventCursor, limit int) []*driver.QueueEvent {
	e.t.Helper()
	out, err := e.effects().RunEventListQueue(e.ctx, &driver.RunEventListQueueParams{Queue: queue, After: after, Limit: limit})
	require.NoError(e.t, err)
	return out.Events
}

// listQueueSettled lists queue's events after cursor once at least n are
// listable. On Postgres an event is listable only once every transaction
// older than its own has ended (driver.QueueEventLister) — on a shared
// cluster, other sessions' transactions hold it back for a moment — so
// this polls the condition, with a generous deadline; SQLite lists every
// committed event at once.
func (e *env) listQueueSettled(queue string, after driver.QueueEventCursor, n int) []*driver.QueueEvent {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := e.listQueue(queue, after, 0)
		if len(out) >= n || time.Now().After(deadline) {
			return out
		}
		time.Sleep(5 * time.Millisecond) // bounded polling of a condition, not a timing guess
	}
}

// appendEvents appends one batch (one transaction) of (run, seq) events.
func (e *env) appendEvents(evs ...driver.RunEventInsert) {
	e.t.Helper()
	for i := range evs {
		evs[i].Kind, evs[i].Payload = "k", []byte(`{}`)
	}
	res, err := e.effects().RunEventAppend(e.ctx, &driver.RunEventAppendParams{Events: evs})
	require.NoError(e.t, err)
	require.Empty(e.t, res.Fenced)
}

// key is an event's (run, seq) for comparisons.
type eventKey struct{ run, seq int64 }

func keysOf(evs []*driver.QueueEvent) []eventKey {
	var out []eventKey
	for _, ev := range evs {
		out = append(out, eventKey{ev.RunID, ev.Seq})
	}
	return out
}

var queueEventCases = []Case{
	{"RunEventListQueueListsAQueuesEventsInCommitOrder", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		e.enqueue(runs.Enqueue{Queue: "a"}, runs.Enqueue{Queue: "a"}, runs.Enqueue{Queue: "b"})
		as := e.claim("a", "w", 2)
		require.Len(t, as, 2)
		r1, r2 := as[0], as[1]
		if r1.ID > r2.ID {
			r1, r2 = r2, r1
		}
		r3 := e.claim("b", "w", 1)[0]
		ev := func(r *driver.Run, seq int64) driver.RunEventInsert {
			return driver.RunEventInsert{RunID: r.ID, Fence: r.Fence, Seq: seq}
		}
		// Commit order: r2's second event commits before r1's second, so
		// the queue lists it first though r1 sorts first within a batch.
		e.appendEvents(ev(r2, 1), ev(r3, 1), ev(r1, 1))
		e.appendEvents(ev(r2, 2))
		e.appendEvents(ev(r1, 2), ev(r3, 2))
		want := []eventKey{{r1.ID, 1}, {r2.ID, 1}, {r2.ID, 2}, {r1.ID, 2}}

		all := e.listQueueSettled("a", driver.QueueEventCursor{}, len(want))
		require.Equal(t, want, keysOf(all), "a batch in (run, seq) order, batches in commit order, queue b left out")
		require.Equal(t, all[0].Pos, all[1].Pos, "one transaction, one position")
		require.Less(t, all[1].Pos, all[2].Pos)
		require.Less(t, all[2].Pos, all[3].Pos)
		require.Equal(t, []byte(`{}`), all[0].Payload)
		require.Equal(t, "k", all[0].Kind)
		require.Equal(t, StartTime, all[0].CreatedAt)

		var paged []*driver.QueueEvent
		for cur := (driver.QueueEventCursor{}); ; {
			page := e.listQueue("a", cur, 1)
			if len(page) == 0 {
				break
			}
			paged = append(paged, page...)
			cur = page[0].Cursor()
		}
		require.Equal(t, want, keysOf(paged), "resuming after each event: no gap, no duplicate")
		require.Equal(t, want[2:], keysOf(e.listQueue("a", all[1].Cursor(), 0)))
		require.Empty(t, e.listQueue("a", all[3].Cursor(), 0))
		require.Equal(t, []eventKey{{r3.ID, 1}, {r3.ID, 2}}, keysOf(e.listQueueSettled("b", driver.QueueEventCursor{}, 2)))
		require.Empty(t, e.listQueue("none", driver.QueueEventCursor{}, 0))

		// A retried batch inserts nothing and moves nothing.
		e.appendEvents(ev(r2, 2))
		require.Equal(t, want, keysOf(e.listQueue("a", driver.QueueEventCursor{}, 0)))
		e.appendEvents(ev(r1, 3))
		require.Equal(t, []eventKey{{r1.ID, 3}}, keysOf(e.listQueueSettled("a", all[3].Cursor(), 1)), "a later commit sorts after every cursor taken before it")
	}},
	{"RunEventListQueueRefusesBadInput", func(t *testing.T, f Factory) {
		e := newEnv(t, f)
		for name, p := range map[string]driver.RunEventListQueueParams{
			"no queue":        {},
			"bad queue":       {Queue: "a b"},
			"negative pos":    {Queue: "a", After: driver.QueueEventCursor{Pos: -1}},
			"negative run":    {Queue: "a", After: driver.QueueEventCursor{RunID: -1}},
			"negative seq":    {Queue: "a", After: driver.QueueEventCursor{Seq: -1}},
			"negative limit":  {Queue: "a", Limit: -1},
			"limit too large": {Queue: "a", Limit: driver.MaxRunEventListLimit + 1},
		} {
			_, err := e.effects().RunEventListQueue(e.ctx, &p)
			require.ErrorIs(t, err, driver.ErrInvalid, name)
		}
	}},
}
