package sqlite

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/leasehold/leasehold/driver"
)

// The queue-wide event order lives in run_events' own key (migration
// 0015): id = (position << eventPosShift) + the event's rank in its
// transaction's batch sorted by (run, fence, seq). So the table's id order
// is the (pos, run, fence, seq) order RunEventListQueue promises, every
// append goes to the right edge of the table, and no second index keeps
// that order (0014's run_events_pos cost each append a b-tree insert).
//
// Why not a plain rowid (max + 1, or AUTOINCREMENT) beside a pos column:
// a reader resumes from a cursor (pos, run, fence, seq) whose own event
// the retention cleaner may have deleted, so the list must seek by
// position — which needs either an index on pos or the position inside
// the key. Why not rank by insertion order: the driver contract sorts one
// transaction's events by (run, fence, seq), and a batch arrives in any
// order; sorting it in Go costs a fraction of a microsecond per event.

// eventPosShift is how many low bits of an id hold the rank: a
// transaction of up to 2^20 events has one position, a larger one takes
// one more per 2^20 (RunEventAppend), leaving 2^43 positions.
const eventPosShift = 20

// eventPosSQL is an event's position read from its id e.id: the events
// stored before positions have negative ids and position 0.
var eventPosSQL = fmt.Sprintf("max(e.id >> %d, 0)", eventPosShift)

// listQueueEventsSQL is RunEventListQueue's read: ?1 the lowest id the
// cursor's position can hold, ?2 the queue, ?3 … ?6 the cursor, ?7 the
// limit.
var listQueueEventsSQL = `SELECT ` + eventPosSQL + `, e.run_id, e.fence, e.seq, e.kind, e.payload, e.created_at
FROM run_events e CROSS JOIN runs r ON r.id = e.run_id
WHERE e.id >= ?1 AND r.queue = ?2 AND (` + eventPosSQL + `, e.run_id, e.fence, e.seq) > (?3, ?4, ?5, ?6)
ORDER BY e.id
LIMIT ?7`

// maxEventPos is the largest position an id can hold.
const maxEventPos = int64(1)<<(63-eventPosShift) - 1

// eventID is the id of the event ranked rank in the batch (eventOrder)
// whose first position is first; ranks past 2^20 spill into the batch's
// next positions, which it took.
func eventID(first int64, rank int) int64 { return first<<eventPosShift + int64(rank) }

// eventOrder returns the batch's indexes sorted by (run, fence, seq):
// the events go in in this order, the j-th with id eventID(first, j), so
// ids rise with every row a batch inserts and each lands at the table's
// right edge (inserting in the batch's order would put rows between
// others: page splits in the middle). Ties (a key repeated within a batch,
// the later copy ignored) keep the batch's order.
func eventOrder(evs []driver.RunEventInsert) []int {
	order := make([]int, len(evs))
	sorted := true
	for i := range order {
		order[i] = i
		if i > 0 && eventKeyCmp(&evs[i-1], &evs[i]) > 0 {
			sorted = false
		}
	}
	if !sorted {
		slices.SortStableFunc(order, func(a, b int) int { return eventKeyCmp(&evs[a], &evs[b]) })
	}
	return order
}

func eventKeyCmp(a, b *driver.RunEventInsert) int {
	return cmp.Or(cmp.Compare(a.RunID, b.RunID), cmp.Compare(a.Fence, b.Fence), cmp.Compare(a.Seq, b.Seq))
}
