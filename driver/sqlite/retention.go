package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/journal"
)

// runPickFinishedSQL picks one cleaner batch: runs of one final state that
// finished before the cutoff (the runs_finished index, oldest first),
// without an effect intent that was never committed — an unresolved
// uncertain effect keeps its run, whatever its age.
const runPickFinishedSQL = `SELECT id FROM runs r
WHERE r.state = ?1 AND r.finished_at IS NOT NULL AND r.finished_at < ?2
  AND NOT EXISTS (SELECT 1 FROM run_effects e WHERE e.run_id = r.id AND e.committed = 0)
ORDER BY r.finished_at, r.id
LIMIT ?3`

// The deletes of a picked batch, children first (run_effects references
// runs). ?1 is the batch's ids as a JSON array.
const (
	runDeleteEventsSQL  = `DELETE FROM run_events WHERE run_id IN (SELECT value FROM json_each(?1))`
	runDeleteEffectsSQL = `DELETE FROM run_effects WHERE run_id IN (SELECT value FROM json_each(?1))`
	runDeleteRunsSQL    = `DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?1))`
)

// RunDeleteFinished implements driver.RunRetainer: the pick and the three
// deletes in one BEGIN IMMEDIATE transaction, so cleaners on several
// processes sharing the file never interleave (the single writer), and a
// batch holds the writer for one bounded transaction only.
func (d *store) RunDeleteFinished(ctx context.Context, p *driver.RunDeleteFinishedParams) (*driver.RunDeleteFinishedResult, error) {
	fail := func(err error) error { return fmt.Errorf("sqlite: deleting finished %s runs: %w", p.State, err) }
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fail(fmt.Errorf("begin: %w", err))
	}
	defer tx.Rollback()
	now := journal.NormalizeTime(d.clock.Now()) // read under the writer lock
	cutoff := now.Add(-p.OlderThan).UnixMicro()
	rows, err := tx.QueryContext(ctx, runPickFinishedSQL, string(p.State), cutoff, p.Limit)
	if err != nil {
		return nil, fail(err)
	}
	ids := make([]int64, 0, p.Limit)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fail(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fail(err)
	}
	rows.Close()
	out := &driver.RunDeleteFinishedResult{}
	if len(ids) == 0 {
		return out, nil // the rollback ends a transaction that wrote nothing
	}
	arg, err := json.Marshal(ids)
	if err != nil {
		return nil, fail(err)
	}
	for _, s := range []struct {
		sql string
		n   *int64
	}{{runDeleteEventsSQL, &out.Events}, {runDeleteEffectsSQL, &out.Effects}, {runDeleteRunsSQL, &out.Runs}} {
		res, err := tx.ExecContext(ctx, s.sql, string(arg))
		if err != nil {
			return nil, fail(err)
		}
		if *s.n, err = res.RowsAffected(); err != nil {
			return nil, fail(err)
		}
	}
	if out.Runs != int64(len(ids)) {
		return nil, fail(fmt.Errorf("picked %d runs but deleted %d", len(ids), out.Runs))
	}
	if err := tx.Commit(); err != nil {
		return nil, fail(fmt.Errorf("commit: %w", err))
	}
	return out, nil
}
