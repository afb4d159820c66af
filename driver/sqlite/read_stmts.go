package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// readStmts are the reads that callers repeat many times a second — a run
// by id (RunGet: the API's run page, a worker's reconcile, the simulator's
// oracle after every step), a world head (WorldGet) and the sweeper's
// scan for expired leases (LeaseScanExpired, every sweep interval) —
// prepared once on the reader pool. database/sql prepares a Stmt on each
// reader connection the first time it runs there and keeps it; unprepared,
// modernc.org/sqlite parses and plans the statement on every call, which
// was about a third of the simulator's CPU (TestSeeds' profile: sqlite3
// RunParser under RunGet and WorldGet).
type readStmts struct {
	runByID, worldByID, expiredWorlds *sql.Stmt
}

// expiredWorldsSQL is LeaseScanExpired's page: ?1 the store's now and
// (?2, ?3) the cursor (expiry in microseconds since the epoch, world id),
// ?4 the limit.
const expiredWorldsSQL = `SELECT id, expires_at FROM worlds
		WHERE holder <> '' AND expires_at <= ?1 AND (expires_at, id) > (?2, ?3)
		ORDER BY expires_at, id LIMIT ?4`

type readStmtCache struct {
	mu sync.Mutex // guards s; held only while preparing (no writer connection needed)
	s  *readStmts
}

// readPrepared returns the reader's prepared statements, preparing them on
// first use (after Migrate has created the tables). A failed preparation
// is not cached, so a call after migrating succeeds.
func (d *store) readPrepared(ctx context.Context) (*readStmts, error) {
	d.readStmts.mu.Lock()
	defer d.readStmts.mu.Unlock()
	if d.readStmts.s != nil {
		return d.readStmts.s, nil
	}
	var s readStmts
	if err := prepareAll(ctx, d.r, "read statements", []stmtSQL{
		{&s.runByID, selectRunSQL},
		{&s.worldByID, selectWorldSQL},
		{&s.expiredWorlds, expiredWorldsSQL},
	}); err != nil {
		return nil, err
	}
	d.readStmts.s = &s
	return &s, nil
}

func (s *readStmts) close() {
	for _, st := range []*sql.Stmt{s.runByID, s.worldByID, s.expiredWorlds} {
		if st != nil {
			st.Close()
		}
	}
}

// closeReadStmts closes the reader's statements (Close, before the pool).
func (d *store) closeReadStmts() {
	d.readStmts.mu.Lock()
	defer d.readStmts.mu.Unlock()
	if d.readStmts.s != nil {
		d.readStmts.s.close()
		d.readStmts.s = nil
	}
}
