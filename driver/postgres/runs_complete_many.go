package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/leasehold/leasehold/driver"
)

// completeRuns completes a batch in one statement: the batch arrives as
// column arrays ($2–$4, sorted by id, without duplicates) and each run is
// completed only WHERE it is running under its completion's fence —
// RunComplete's rule, for many rows at once. A run that matches nothing
// (fenced out, already final, missing) is not returned and is left as it
// was.
//
// The statement is the function leasehold_complete_runs (migration 0024):
// one UPDATE that reads runs by a plain index scan of runs_pkey for
// id = ANY($2), so it locks the rows it writes in id order — the order
// every multi-row locker that waits takes its locks in (the renewal
// drain's l, a run event batch's FOR SHARE), so no two of them can wait
// for each other in a cycle. The function's SET keeps the planner off the
// sequential and bitmap scans, which would reach the rows in the table's
// physical order. Each row's fence and result are found in the arrays by
// binary search (width_bucket of the id over the sorted ids: its position).
//
// Before 0024 the completion locked its runs in a CTE (FOR UPDATE, ORDER
// BY id) and then updated them: one row-lock WAL record per run besides
// the update's own, and the batch joined to runs twice. A plain UPDATE …
// FROM unnest(…) without the lock was no answer: its lock order is the
// join plan's, and its generic plan (pgx prepares the statement, and the
// server switches to a generic plan after five runs) was a Nested Loop
// over the whole batch per run — four times the old statement's CPU.
//
// A run whose row the UPDATE waited for is re-checked on its new version
// (READ COMMITTED): one reclaimed or cancelled meanwhile no longer matches
// its fence and is not completed.
//
// The store time is read once for the batch (an uncorrelated subquery, an
// InitPlan). Each completed run comes back as its position in the sorted
// batch (from 1), so the caller marks it in a slice rather than looking
// its id up in a map.
const completeRuns = `SELECT leasehold_complete_runs($2, $3, $4, $1)`

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
	// The batch sorted by id (the function's binary search and its lock
	// order); order[k] is the batch index of the k-th.
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	if !slices.IsSortedFunc(order, func(a, b int32) int { return cmp.Compare(p.Runs[a].ID, p.Runs[b].ID) }) {
		slices.SortFunc(order, func(a, b int32) int { return cmp.Compare(p.Runs[a].ID, p.Runs[b].ID) })
	}
	ids, fences, results := make(int8Array, n), make(int8Array, n), make(byteaArray, n)
	for k, i := range order {
		c := &p.Runs[i]
		ids[k], fences[k], results[k] = c.ID, c.Fence, c.Result
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
	var k int64
	for rows.Next() {
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return nil, fail(err)
		}
		if k < 1 || k > int64(n) || done[order[k-1]] {
			rows.Close()
			return nil, fail(fmt.Errorf("completion %d returned out of the batch or twice", k))
		}
		done[order[k-1]] = true
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
	for i := range p.Runs {
		if done[i] {
			out.Completed = append(out.Completed, p.Runs[i].ID)
		} else {
			out.Fenced = append(out.Fenced, i)
		}
	}
	return out, nil
}
