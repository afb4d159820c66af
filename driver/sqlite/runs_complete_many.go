package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// completeChunk is how many completions one runCompleteChunkSQL carries.
// Measured side by side on batches of 1000, a statement per chunk of 50 to
// 200 completed about 40% more runs per second than a statement per
// completion: the per-call cost of database/sql and the driver is paid
// once per chunk instead of once per run. The size within that range made
// no difference.
const completeChunk = 100

// runCompleteChunkSQL completes up to completeChunk runs in one statement:
// RunComplete's rule, WHERE id AND fence AND state = 'running', joined
// against the chunk's rows (c, one primary-key lookup each). Completion i
// (from 0) binds parameters 3i+1, 3i+2, 3i+3 as id, fence and result; the
// last parameter, after the chunk's, is the finish time. A chunk that is
// not full is padded with NULL ids, which match no run, so one prepared
// statement serves every size. RETURNING names the runs it completed.
var runCompleteChunkSQL = valuesCTE("c(id, fence, result)", completeChunk, 3) + `
UPDATE runs SET state = 'completed', result = c.result, finished_at = ?, owner = '', expires_at = NULL
FROM c
WHERE runs.id = c.id AND runs.fence = c.fence AND runs.state = 'running'
RETURNING runs.id`

// valuesCTE is "WITH <table> AS (VALUES …)" of rows rows of width
// parameters each: the chunk a multi-row statement joins against, one
// prepared statement for every batch size (unused rows are bound to NULL
// and match nothing). Being first in the statement, its parameters are
// numbered 1 to rows×width; the statement's own follow them.
//
// The parameters are anonymous ("?"), not numbered ("?NNN"), on purpose:
// modernc.org/sqlite asks SQLite for each parameter's name on every bind
// (sqlite3_bind_parameter_name), which for numbered parameters is a
// linear search of the statement's name list — quadratic in the chunk's
// width, 10–28 % of a completion batch's CPU in the profile
// (docs/BENCHMARKS.md). Anonymous parameters have no name to look up.
func valuesCTE(table string, rows, width int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "WITH %s AS (VALUES ", table)
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := range width {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('?')
		}
		b.WriteByte(')')
	}
	b.WriteByte(')')
	return b.String()
}

// RunCompleteMany implements driver.RunStore: the whole batch is in one
// writer transaction — one commit, one fsync, shared with the enqueues and
// claims queued beside it (group.go) — of one prepared
// runCompleteChunkSQL per completeChunk completions. Under the single
// writer no reclaim or cancel can come between the chunks, so the batch is
// applied as of one instant; ids are distinct (validated), so no run is
// changed twice. A completion that matched no row (fenced out, already
// final, missing) is reported by index and leaves its run unchanged; the
// others commit all the same.
func (d *store) RunCompleteMany(ctx context.Context, p *driver.RunCompleteManyParams) (*driver.RunCompleteManyResult, error) {
	// Valid, not empty, ids distinct, results compact or nil:
	// driver.Validating.
	out := &driver.RunCompleteManyResult{}
	n := len(p.Runs)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("sqlite: completing %d runs: "+format, append([]any{n}, args...)...)
	}
	// Prepared before BeginTx: see runPrepared.
	st, err := d.runPrepared(ctx)
	if err != nil {
		return nil, err
	}
	done := make(map[int64]struct{}, n)
	err = d.inGroupTx(ctx, fmt.Sprintf("completing %d runs", n), func(ctx context.Context, tx *sql.Tx) error {
		complete := tx.StmtContext(ctx, st.completeChunk)
		args := make([]any, 3*completeChunk+1)
		args[3*completeChunk] = journal.NormalizeTime(d.clock.Now()).UnixMicro() // read under the writer lock
		for from := 0; from < n; from += completeChunk {
			for i := range completeChunk {
				a := args[3*i : 3*i+3]
				if k := from + i; k < n {
					a[0], a[1], a[2] = p.Runs[k].ID, p.Runs[k].Fence, nullBytes(p.Runs[k].Result)
				} else {
					a[0], a[1], a[2] = nil, nil, nil
				}
			}
			if err := scanIDs(ctx, complete, args, done); err != nil {
				return fail("completions %d to %d: %w", from, min(from+completeChunk, n)-1, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// RETURNING has no order: report in batch order.
	for i := range p.Runs {
		if _, ok := done[p.Runs[i].ID]; ok {
			out.Completed = append(out.Completed, p.Runs[i].ID)
		} else {
			out.Fenced = append(out.Fenced, i)
		}
	}
	return out, nil
}

// scanIDs runs one chunk and adds the ids it returned to done.
func scanIDs(ctx context.Context, complete *sql.Stmt, args []any, done map[int64]struct{}) error {
	rows, err := complete.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var id int64
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			return err
		}
		done[id] = struct{}{}
	}
	return rows.Err()
}
