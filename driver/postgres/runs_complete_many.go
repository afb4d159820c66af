package postgres

import (
	"context"
	"fmt"

	"github.com/leasehold/leasehold/driver"
)

// completeRuns completes a batch in one statement: the batch arrives as
// column arrays ($2–$4, unnested in step) and each run is completed only
// WHERE it is running under its completion's fence — RunComplete's rule,
// for many rows at once. A run that matches nothing (fenced out, already
// final, missing) is not returned and is left as it was.
//
// l picks the runs held under their completion's fence and locks them in
// id order; the UPDATE then changes only rows l has locked. Without l the
// UPDATE would lock rows in whatever order its join plan visits them (the
// batch's order, or the table's), and two lockers of overlapping runs
// could each wait for the other: a RunEventAppend (which locks its runs
// FOR SHARE in id order) or another batch holding run 1 and waiting for
// run 2 while this batch holds run 2 and waits for run 1 — a deadlock the
// server breaks only after deadlock_timeout, by aborting a statement.
// Every multi-row locker that waits takes its locks in id order, so no
// cycle can form. The order costs one row-lock WAL record per run: about
// a fifth of the batch's throughput, measured against the same UPDATE
// without l.
//
// A run whose lock l waited for is re-checked on its new version under
// the lock (READ COMMITTED): one reclaimed or cancelled meanwhile drops out
// of l and is not completed. The UPDATE's WHERE states the fence again,
// so the rule is written where the write is.
//
// The store time is read once for the batch. Each completed run comes
// back as its position in the batch (the ordinality i, from 1), so the
// caller marks it in a slice rather than looking its id up in a map.
//
// l finds the batch's rows by primary key alone: r.id = ANY($2) restates
// the join as a condition on runs, and l does not test the state. With
// r.state = 'running' in l, the planner read every running run — through
// a running-state partial index (then runs_running_queue), or
// by a sequential scan — and hash-joined the batch against them (EXPLAIN
// in TestRunPathExplained): a completion's cost grew with the number of
// runs held, not with its batch. The state is tested where the write is:
// a run of the batch that is final under the same fence is locked by l
// for the rest of the statement, and not changed.
const completeRuns = `WITH ` + storeNowSQL + `,
l AS (
    SELECT r.id, c.fence, c.result, c.i
    FROM unnest($2::bigint[], $3::bigint[], $4::bytea[]) WITH ORDINALITY AS c(id, fence, result, i)
    JOIN runs r ON r.id = c.id AND r.fence = c.fence
    WHERE r.id = ANY($2::bigint[])
    ORDER BY r.id
    FOR UPDATE OF r
)
UPDATE runs r SET state = 'completed', result = l.result, finished_at = t.now, owner = '', expires_at = NULL
FROM l, t
WHERE r.id = l.id AND r.fence = l.fence AND r.state = 'running'
RETURNING l.i`

// RunCompleteMany implements driver.RunStore: one statement in autocommit
// on the critical pool — one round trip, one commit — whatever the batch's
// size. Completions that matched no row are reported by index; telling a
// fenced one from a missing one would cost a read the batch completer does
// not need (it only tells each runner that its completion was refused).
func (d *store) RunCompleteMany(ctx context.Context, p *driver.RunCompleteManyParams) (*driver.RunCompleteManyResult, error) {
	// Valid, not empty, ids distinct, results compact or nil:
	// driver.Validating.
	out := &driver.RunCompleteManyResult{}
	n := len(p.Runs)
	ids, fences, results := make(int8Array, n), make(int8Array, n), make(byteaArray, n)
	for i, c := range p.Runs {
		ids[i], fences[i], results[i] = c.ID, c.Fence, c.Result
	}
	fail := func(err error) error {
		return fmt.Errorf("postgres: completing %d runs: %w", n, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, completeRuns, d.fakeNow(), ids, fences, results)
	if err != nil {
		return nil, fail(err)
	}
	done := make([]bool, n)
	completed := 0
	var i int64
	for rows.Next() {
		if err := rows.Scan(&i); err != nil {
			rows.Close()
			return nil, fail(err)
		}
		if i < 1 || i > int64(n) || done[i-1] {
			rows.Close()
			return nil, fail(fmt.Errorf("completion %d returned out of the batch or twice", i))
		}
		done[i-1] = true
		completed++
	}
	if err := rows.Err(); err != nil {
		return nil, fail(mapWriteError(err))
	}
	// RETURNING has no order: report in batch order. Ids are distinct
	// (validated), so each is either completed or fenced.
	if completed > 0 {
		out.Completed = make([]int64, 0, completed)
	}
	for i, id := range ids {
		if done[i] {
			out.Completed = append(out.Completed, id)
		} else {
			out.Fenced = append(out.Fenced, i)
		}
	}
	return out, nil
}
