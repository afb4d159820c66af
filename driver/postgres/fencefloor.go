package postgres

import (
	"strings"

	"github.com/leasehold/leasehold/internal/bugs"
	"github.com/leasehold/leasehold/journal"
)

// The fence floor: why a fence (or a world's epoch) is never handed out
// twice, even by a standby promoted after it lost writes.
//
// A run's fence is persisted with the run and raised by one on every
// claim, reclaim and cancel. An asynchronous standby (or a synchronous one
// promoted by hand while it lagged) can be promoted without the last
// commits of the old primary. A claim among them happened in the world —
// its holder runs and calls downstream systems with its fence — but the
// promoted server holds the run at its older fence, so fence+1 would hand
// the same number to the next holder: two holders, one fence, and every
// check that compares fences alone (the store's fenced writes, a
// downstream that rejects lower tokens) accepts both.
//
// Promotion always starts a new WAL timeline, and timeline ids only grow
// within a cluster's family of servers. Each timeline tl gets its own band
// of fences, starting past floor(tl) = (tl-1) << 40: a fence-issuing
// statement writes greatest(fence, floor) + 1, which is
//   - still fence+1 on a server that was never promoted (timeline 1, floor
//     0), so nothing changes for anyone who does not fail over;
//   - strictly greater than the row's fence, always;
//   - greater than every fence the old timeline can have issued for the
//     row: those started below floor(tl) (at the row's fence when the new
//     timeline forked off) and grew by one per claim, so they stay below
//     floor(tl) unless one run was claimed 2^40 times on one timeline.
//
// 2^40 claims per run per timeline and 2^23 promotions fit in an int64.
// Fences are not issued on a server in recovery (the statements write),
// so the timeline read is the server's final one.
//
// Where the timeline comes from: pg_walfile_name(pg_current_wal_lsn())
// names the WAL segment being written now, and its first eight hex digits
// are the timeline WAL is inserted on (GetWALInsertionTimeLine), which a
// promotion sets before the server accepts its first write. Any role may
// call both functions. pg_control_checkpoint()'s timeline_id would be
// wrong: it is the timeline of the last checkpoint, and a promotion does
// not wait for its end-of-recovery checkpoint — for the first moments
// after it (exactly when the lost claims are claimed again) it still
// names the old timeline. The timeline is read inside every statement
// that issues a fence rather than once per connection: a connection
// opened to a hot standby before its promotion survives the promotion
// and would keep the old timeline's floor.
//
// World epochs get the same floor: the lease changes read it in their
// first round trip (change.go, readFloor) and WorldCreate with its clock,
// and the journal's planner starts the next epoch past it
// (journal.State.EpochFloor, journal/epoch.go).
//
// SQLite has no failover: its fences and epochs are +1 (driver/sqlite).
// docs/design/fencing.md §9 has the argument in full.
const timelineFloorSQL = `((('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint - 1) << 40)`

// fenceFloorSQL is the floor as a CTE, fl.floor, for the run statements.
const fenceFloorSQL = `fl AS (SELECT ` + timelineFloorSQL + ` AS floor)`

// readFloor reads the floor alone, for the world's lease changes.
const readFloor = `SELECT ` + timelineFloorSQL

// FenceFloor is the lowest value above which a server on WAL timeline tl
// issues fences and epochs: (tl-1) · journal.EpochBand, the shift in
// timelineFloorSQL. A fence issued on timeline tl is greater than
// FenceFloor(tl).
func FenceFloor(timeline int64) int64 { return (timeline - 1) * journal.EpochBand }

// plantedFloorBug drops the floor (it becomes 0, every fence and epoch +1
// as before it existed) when the planted bug asks for it: a -tags simbugs
// build only, so that the failover tests can show they catch a reissued
// fence. In any other build the switch is a false constant and sql comes
// back as is.
func plantedFloorBug(sql string) string {
	if !bugs.NoFenceFloor {
		return sql
	}
	return strings.Replace(sql, timelineFloorSQL, `0::bigint`, 1)
}
