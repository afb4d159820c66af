package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
)

// runHeldSQL is the fence every effect and event write carries in its own
// WHERE: the run ?run is running under ?fence. Under BEGIN IMMEDIATE no
// claim, reclaim or cancel can commit between this check and the write.
func runHeldSQL(run, fence string) string {
	return `EXISTS (SELECT 1 FROM runs WHERE runs.id = ` + run + ` AND runs.fence = ` + fence + ` AND runs.state = 'running')`
}

// effectColumns is the column list every effect statement selects or
// returns, in scanEffect's order.
const effectColumns = `run_id, key, fence, committed, result, created_at, committed_at`

// The effect and event statements (variables only because runHeldSQL
// builds their fence clause).
var (
	// runHeldCheckSQL is the fence check a transaction makes before it reads
	// (Begin, Resolve, Tx): a fenced runner learns nothing about effects.
	runHeldCheckSQL = `SELECT ` + runHeldSQL("?1", "?2")

	effectSelectSQL = `SELECT ` + effectColumns + ` FROM run_effects WHERE run_id = ?1 AND key = ?2`

	// effectInsertIntentSQL inserts an intent under ?3.
	effectInsertIntentSQL = `INSERT INTO run_effects (run_id, key, fence, committed, created_at)
SELECT ?1, ?2, ?3, 0, ?4 WHERE ` + runHeldSQL("?1", "?3") + `
RETURNING ` + effectColumns

	// effectCommitSQL commits an intent only this fence started, while the
	// run is still held under it.
	effectCommitSQL = `UPDATE run_effects SET committed = 1, result = ?1, committed_at = ?2
WHERE run_id = ?3 AND key = ?4 AND fence = ?5 AND committed = 0 AND ` + runHeldSQL("?3", "?5") + `
RETURNING ` + effectColumns

	// effectResolveCommitSQL records that an uncertain effect happened. The
	// fence becomes the resolver's: the row now says who settled it.
	effectResolveCommitSQL = `UPDATE run_effects SET committed = 1, result = ?1, committed_at = ?2, fence = ?5
WHERE run_id = ?3 AND key = ?4 AND committed = 0 AND ` + runHeldSQL("?3", "?5") + `
RETURNING ` + effectColumns

	// effectResolveDeleteSQL removes an uncertain intent that did not
	// happen, so the next RunEffectBegin starts it afresh.
	effectResolveDeleteSQL = `DELETE FROM run_effects
WHERE run_id = ?1 AND key = ?2 AND committed = 0 AND ` + runHeldSQL("?1", "?3") + `
RETURNING ` + effectColumns

	// effectInsertCommittedSQL is RunTx's effect: inserted committed, in the
	// caller's transaction. The fence is checked again here, after fn ran in
	// the same transaction: fn cannot have released the run unnoticed.
	effectInsertCommittedSQL = `INSERT INTO run_effects (run_id, key, fence, committed, result, created_at, committed_at)
SELECT ?1, ?2, ?3, 1, ?4, ?5, ?5 WHERE ` + runHeldSQL("?1", "?3") + `
RETURNING ` + effectColumns

	// eventInsertSQL inserts one event under id ?1 (eventID) if its run is
	// running under its fence; a (run, fence, seq) already present inserts
	// nothing (OR IGNORE: see eventInsertChunkSQL).
	eventInsertSQL = `INSERT OR IGNORE INTO run_events (id, run_id, fence, seq, kind, payload, created_at)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE ` + runHeldSQL("?2", "?3")

	// eventPositionSQL takes the append transaction's ?1 positions in the
	// queue-wide event order (migration 0014's counter), returning the
	// last: one counter, bumped under the one writer, so a later commit
	// always has higher positions — and, with ids built from them
	// (eventID), higher ids than every event stored before it.
	eventPositionSQL = `UPDATE run_event_position SET pos = pos + ?1 WHERE one = 1 RETURNING pos`

	eventExistsSQL = `SELECT EXISTS (SELECT 1 FROM run_events WHERE run_id = ?1 AND fence = ?2 AND seq = ?3)`
)

// eventChunk is how many events one eventInsertChunkSQL inserts: one
// statement per chunk instead of one per event pays the per-call cost of
// database/sql, the driver and the VM once per chunk, and 100 events bind
// 502 parameters, far below SQLite's limit.
const eventChunk = 100

// eventChunkMin is the fewest events worth eventInsertChunkSQL: a shorter
// stretch (a small batch, or a batch's tail) goes in event by event with
// eventInsertSQL, which binds 7 parameters instead of the padded chunk's
// 502.
const eventChunkMin = 4

// eventInsertChunkSQL inserts up to eventChunk events, each only if its run
// is running under its fence (the join), a (run, fence, seq) already
// present inserting nothing. Parameter 1 is the id of the chunk's first
// event (eventID: the chunk's events take consecutive ids, event i's its
// literal i added, so no id is bound per row — a large int64 boxed in an
// interface is an allocation each) and parameter 2 the creation time;
// event i (from 0) binds parameters 5i+3 … 5i+7 as run_id, fence, seq,
// kind and payload. A chunk that is not full is padded with NULL run ids,
// which the join and the WHERE drop, so one prepared statement serves
// every size.
//
// OR IGNORE, not ON CONFLICT DO NOTHING: both skip a row whose key is
// present, but a statement that may abort halfway (a NOT NULL column under
// the default ABORT) makes SQLite open a statement journal for every
// multi-row statement inside a transaction and copy into it each page the
// statement touches — a tenth of the batched path's CPU (BENCHMARKS.md,
// Must-show 3). Under OR IGNORE no constraint aborts, so there is none.
// Nothing it would now skip silently can reach it: every column is bound
// from a validated event (driver.Validating: kind an id, payload compact
// JSON) or the join, and an event that was not inserted is classified by
// its key afterwards, as before.
//
// The parameters are anonymous (?, numbered in the order they appear), not
// ?NNN: see runInsertChunkSQL.
var eventInsertChunkSQL = func() string {
	var b strings.Builder
	b.WriteString(`INSERT OR IGNORE INTO run_events (id, run_id, fence, seq, kind, payload, created_at)
SELECT ? + v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, ?
FROM (VALUES `)
	for i := range eventChunk {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d, ?, ?, ?, ?, ?)", i)
	}
	b.WriteString(`) AS v
JOIN runs r ON r.id = v.column2 AND r.fence = v.column3 AND r.state = 'running'
WHERE v.column2 IS NOT NULL`)
	return b.String()
}()

// effectStmts are the effect and event statements, prepared once on the
// writer connection (see stmts). run holds the run statements, which the
// refusals read the run with.
type effectStmts struct {
	run *runStmts

	held, selectEffect, insertIntent, commit, resolveCommit, resolveDelete, insertCommitted,
	insertEvent, insertEventChunk, eventExists, eventPosition *sql.Stmt
}

type effectStmtCache struct {
	mu sync.Mutex // guards s; held only while preparing
	s  *effectStmts
}

// effectPrepared returns the prepared effect statements (and the run
// statements), preparing them on first use. Like runPrepared, call it
// before BeginTx, never inside a transaction: preparing needs the one
// writer connection, which an open transaction holds. A failed preparation
// is not cached.
func (d *store) effectPrepared(ctx context.Context) (*effectStmts, error) {
	rs, err := d.runPrepared(ctx)
	if err != nil {
		return nil, err
	}
	d.effectStmts.mu.Lock()
	defer d.effectStmts.mu.Unlock()
	if d.effectStmts.s != nil {
		return d.effectStmts.s, nil
	}
	s := effectStmts{run: rs}
	if err := prepareAll(ctx, d.w, "effect statements", []stmtSQL{
		{&s.held, runHeldCheckSQL},
		{&s.selectEffect, effectSelectSQL},
		{&s.insertIntent, effectInsertIntentSQL},
		{&s.commit, effectCommitSQL},
		{&s.resolveCommit, effectResolveCommitSQL},
		{&s.resolveDelete, effectResolveDeleteSQL},
		{&s.insertCommitted, effectInsertCommittedSQL},
		{&s.insertEvent, eventInsertSQL},
		{&s.insertEventChunk, eventInsertChunkSQL},
		{&s.eventPosition, eventPositionSQL},
		{&s.eventExists, eventExistsSQL},
	}); err != nil {
		return nil, err
	}
	d.effectStmts.s = &s
	return &s, nil
}

// close closes the effect statements (not the run statements, which their
// own cache owns).
func (s *effectStmts) close() {
	for _, st := range []*sql.Stmt{s.held, s.selectEffect, s.insertIntent, s.commit, s.resolveCommit,
		s.resolveDelete, s.insertCommitted, s.insertEvent, s.insertEventChunk, s.eventExists, s.eventPosition} {
		if st != nil {
			st.Close()
		}
	}
}
