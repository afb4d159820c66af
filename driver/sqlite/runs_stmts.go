package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// runStmts are the run statements, prepared once on the writer connection
// for the reason stmts are (modernc.org/sqlite parses every unprepared
// statement again). They are a cache of their own so that the world path
// does not depend on the runs table, nor the run path on the worlds table.
type runStmts struct {
	insert, insertChunk, selectByKey, selectByID, claim, renew, complete, completeChunk, renewChunk, fail, snooze, block, unblock, cancel, retry, reclaim, release *sql.Stmt
	// The group commit's savepoint around each op (group.go): parsed on
	// every Exec otherwise, 17µs a pair against 2µs prepared.
	savepoint, releaseSavepoint, rollbackSavepoint *sql.Stmt
}

// runSelectByKeySQL reads the run holding a unique key in a period
// bucket (runs_unique_key: at most one).
const runSelectByKeySQL = `SELECT ` + runColumns + ` FROM runs WHERE unique_key = ? AND unique_bucket = ? AND ` + uniqueHeldSQL

type runStmtCache struct {
	mu sync.Mutex // guards s; held only while preparing
	s  *runStmts
}

// runPrepared returns the prepared run statements, preparing them on first
// use. Call it before BeginTx, never inside a transaction: preparing needs
// the one writer connection, which an open transaction holds, so a
// transaction waiting here for mu while the preparer waits for the
// connection would deadlock. A failed preparation is not cached.
func (d *store) runPrepared(ctx context.Context) (*runStmts, error) {
	d.runStmts.mu.Lock()
	defer d.runStmts.mu.Unlock()
	if d.runStmts.s != nil {
		return d.runStmts.s, nil
	}
	var s runStmts
	if err := prepareAll(ctx, d.w, "run statements", []stmtSQL{
		{&s.insert, runInsertSQL},
		{&s.insertChunk, runInsertChunkSQL},
		{&s.selectByKey, runSelectByKeySQL},
		{&s.selectByID, selectRunSQL},
		{&s.claim, runClaimSQL},
		{&s.renew, runRenewSQL},
		{&s.complete, plantedCompleteBug(runCompleteSQL)},
		{&s.completeChunk, runCompleteChunkSQL},
		{&s.renewChunk, plantedRevivalBug(runRenewChunkSQL)},
		{&s.fail, runFailSQL},
		{&s.snooze, runSnoozeSQL},
		{&s.block, runBlockSQL},
		{&s.unblock, runUnblockSQL},
		{&s.cancel, runCancelSQL},
		{&s.retry, runRetrySQL},
		{&s.reclaim, runReclaimSQL},
		{&s.release, runReleaseSQL},
		{&s.savepoint, "SAVEPOINT op"},
		{&s.releaseSavepoint, "RELEASE op"},
		{&s.rollbackSavepoint, "ROLLBACK TO op"},
	}); err != nil {
		return nil, err
	}
	d.runStmts.s = &s
	return &s, nil
}

func (s *runStmts) close() {
	for _, st := range []*sql.Stmt{s.insert, s.insertChunk, s.selectByKey, s.selectByID, s.claim, s.renew, s.complete,
		s.completeChunk, s.renewChunk, s.fail, s.snooze, s.block, s.unblock, s.cancel, s.retry, s.reclaim, s.release,
		s.savepoint, s.releaseSavepoint, s.rollbackSavepoint} {
		if st != nil {
			st.Close()
		}
	}
}
