package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/lease"
	"github.com/leasehold/leasehold/runs"
)

// RunStore is the run half of a store of record (SPEC §3). Every method's
// fencing lives in its SQL WHERE; every time is the store's clock.
type RunStore interface {
	// RunEnqueue inserts runs in one transaction, in order. A run whose
	// UniqueKey is held — by a run in one of that run's UniqueStates, in
	// the same UniquePeriod bucket of the store clock (runs/unique.go) —
	// is not inserted: its result is the holder with Existing set, also
	// when two enqueues race.
	RunEnqueue(ctx context.Context, p *RunEnqueueParams) ([]RunEnqueued, error)
	// RunEnqueueTx is RunEnqueue inside the caller's own transaction
	// p.Tx (runs_tx.go): the runs are inserted by the caller's
	// transaction and exist if and only if it commits. The driver never
	// commits nor rolls it back. A Tx of another kind than the store's
	// (pgx.Tx for Postgres, *sql.Tx for SQLite), or one already ended, is
	// refused with a *journal.InputError (ErrInvalid) and writes nothing.
	RunEnqueueTx(ctx context.Context, p *RunEnqueueTxParams) ([]RunEnqueued, error)
	// RunGet returns a run. ErrNotFound if it does not exist.
	RunGet(ctx context.Context, p *RunGetParams) (*Run, error)
	// RunClaim claims up to p.Limit available runs of p.Queue whose
	// scheduled time has passed, lowest priority value first, then oldest
	// scheduled, then lowest id: state running, owner p.Owner,
	// fence+1, attempt+1, expires_at = store now + p.Lease. Postgres: FOR
	// UPDATE SKIP LOCKED, so concurrent claimers never claim one run twice.
	RunClaim(ctx context.Context, p *RunClaimParams) ([]*Run, error)
	// RunRenew is the synchronous heartbeat: expires_at = store now +
	// p.Lease WHERE id AND fence AND owner AND state = 'running' AND
	// expires_at > now. It never revives an expired lease (ErrLeaseExpired)
	// and never renews a fenced-out one (ErrFenced).
	RunRenew(ctx context.Context, p *RunRenewParams) (*Run, error)
	// RunRenewMany is the write-behind drain (SPEC §2): for every (id,
	// fence) of the batch, expires_at = store now + p.Lease WHERE fence AND
	// owner = p.Owner (or p.Owners[i]) AND state = 'running' AND expires_at > now — the
	// expiry compared with the store clock read after the row is locked.
	// One statement (Postgres) or one transaction (SQLite), one commit. It
	// writes only the expiry: never a fence, never an expired lease
	// revived. Runs it did not renew are reported by index in Lost.
	RunRenewMany(ctx context.Context, p *RunRenewManyParams) (*RunRenewManyResult, error)
	// RunComplete finishes a run WHERE id AND fence AND state = 'running'.
	RunComplete(ctx context.Context, p *RunCompleteParams) (*Run, error)
	// RunCompleteMany completes a batch of runs in one statement (Postgres)
	// or one transaction (SQLite), one commit: each completion applies
	// WHERE id AND fence AND state = 'running', exactly as RunComplete's
	// does. The runs it matches are completed (result, finished_at = store
	// now, owner '', no expiry); the others (fenced out, finished, or
	// missing) are reported by index in Fenced and left unchanged. The
	// whole batch is validated first: one bad completion, more than
	// MaxRunCompleteBatch, or one id twice refuses it all with a
	// *journal.InputError (ErrInvalid), nothing written.
	RunCompleteMany(ctx context.Context, p *RunCompleteManyParams) (*RunCompleteManyResult, error)
	// RunFail records a failed attempt WHERE id AND fence AND state =
	// 'running': available again at store now + p.RetryAfter while attempt <
	// max_attempts, otherwise failed. The reason is recorded either way.
	RunFail(ctx context.Context, p *RunFailParams) (*Run, error)
	// RunSnooze puts a held run back to available at store now + p.Delay
	// without consuming its attempt (attempt - 1: the next claim's
	// attempt + 1 gives the same number back), snoozes + 1, lease
	// released, WHERE id AND fence AND state = 'running' AND snoozes <
	// p.MaxSnoozes (runs_snooze.go). A run that already snoozed
	// MaxSnoozes times is refused with a *SnoozeLimitError (ErrConflict)
	// and left unchanged; a fenced-out one as RunComplete's (ErrFenced).
	RunSnooze(ctx context.Context, p *RunSnoozeParams) (*Run, error)
	// RunBlock releases the lease and parks the run until RunUnblock,
	// WHERE id AND fence AND state = 'running'.
	RunBlock(ctx context.Context, p *RunBlockParams) (*Run, error)
	// RunUnblock makes a blocked run available at once. ErrConflict if it is
	// not blocked.
	RunUnblock(ctx context.Context, p *RunUnblockParams) (*Run, error)
	// RunCancel is an operator action: no fence needed; an available,
	// running or blocked run becomes cancelled with fence+1, so a running
	// holder is fenced out. ErrConflict if the run is already final.
	RunCancel(ctx context.Context, p *RunCancelParams) (*Run, error)
	// RunRetry is an operator action, River's JobRetry (runs_retry.go): a
	// failed or cancelled run becomes available at store now with a fresh
	// attempt budget (max_attempts raised to attempt+1 when exhausted),
	// finished_at cleared, WHERE state IN ('failed','cancelled') AND (the
	// fence p names, when it names one). ErrFenced if the run moved past
	// that fence, ErrConflict if it is in another state (or its unique key
	// was taken meanwhile), ErrNotFound if there is no such run.
	RunRetry(ctx context.Context, p *RunRetryParams) (*Run, error)
	// RunReclaim returns up to p.Limit running runs whose lease expired on
	// the store clock to available (or failed when attempts are exhausted),
	// fence+1, reason recorded, reclaimed_at = store now. scheduled_at is
	// kept, so a reclaimed run is claimed in the place it had, not behind
	// the queue (docs/design/run-order.md). Safe on every replica at once
	// (Postgres: SKIP LOCKED; SQLite: the single writer). Callers repeat
	// while Reclaimed comes back full.
	RunReclaim(ctx context.Context, p *RunReclaimParams) (*RunReclaimResult, error)
}

// Run is a run's row.
type Run struct {
	ID          int64
	Queue       string
	Payload     []byte
	Priority    int
	State       runs.State
	Attempt     int
	MaxAttempts int
	Fence       int64
	Owner       string    // "" unless running
	ScheduledAt time.Time // store clock
	ExpiresAt   time.Time // store clock; zero unless running
	UniqueKey   string
	Reason      string // the last failure, block, cancel or reclaim reason
	Result      []byte // set by RunComplete
	CreatedAt   time.Time
	FinishedAt  time.Time // zero until final
	Snoozes     int       // how often a handler snoozed it (RunSnooze); never reset
	// ReclaimedAt is the store time of the run's last reclaim (zero if
	// never). A reclaim leaves ScheduledAt alone, so the run keeps its
	// place in the queue (docs/design/run-order.md).
	ReclaimedAt time.Time
}

// RunEnqueueParams enqueues runs.
type RunEnqueueParams struct{ Runs []runs.Enqueue }

// Class implements lease.Classed.
func (*RunEnqueueParams) Class() lease.Durability { return lease.SyncCritical }

// RunEnqueued is one enqueue's result.
type RunEnqueued struct {
	Run      *Run
	Existing bool // the unique key was taken: Run is the first run
}

// RunGetParams names a run.
type RunGetParams struct{ ID int64 }

// RunClaimParams claims runs.
type RunClaimParams struct {
	Queue string
	Owner string
	Limit int
	Lease time.Duration
}

// Class implements lease.Classed.
func (*RunClaimParams) Class() lease.Durability { return lease.SyncCritical }

// RunRenewParams renews a lease synchronously (heartbeat mode sync).
type RunRenewParams struct {
	ID, Fence int64
	Owner     string
	Lease     time.Duration
}

// Class implements lease.Classed: in sync mode every renewal is a
// synchronous fenced write (write-behind renewals are LossTolerantCoalesced
// and arrive with the keeper).
func (*RunRenewParams) Class() lease.Durability { return lease.SyncCritical }

// MaxRunRenewBatch bounds one RunRenewMany batch: one drain of a process
// holding that many runs.
const MaxRunRenewBatch = 100000

// RunLeaseRef names one lease: a run under one fence. A new claim of the
// same run is a new ref.
type RunLeaseRef struct{ ID, Fence int64 }

// RunRenewManyParams is one drain of the write-behind keeper.
type RunRenewManyParams struct {
	Owner string
	Lease time.Duration
	Runs  []RunLeaseRef
	// Owners, when not nil, names each run's owner (Owners[i] holds
	// Runs[i]) and Owner is ignored: one drain for the leases of many
	// holders, as the server's keeper drains every remote runner's at once.
	Owners []string
}

// Class implements lease.Classed: write-behind renewals are coalesced and
// loss-tolerant — a lost one only makes recovery more eager. They still go
// through the critical pool (lease writes must not queue behind bulk work).
func (*RunRenewManyParams) Class() lease.Durability { return lease.LossTolerantCoalesced }

// RunRenewManyResult says what became of a drain.
type RunRenewManyResult struct {
	// Renewed are the ids renewed, in batch order.
	Renewed []int64
	// Lost are the indexes into the batch, ascending, of the leases not
	// renewed: fenced out, expired on the store clock, no longer running,
	// owned by another, or missing. The keeper treats each as lost.
	Lost []int
	// StoreNow is the store time the drain renewed against (each renewed
	// expiry is StoreNow + Lease): the runtime store-clock watch's probe.
	// Zero when nothing was renewed (Postgres returns it with the rows).
	StoreNow time.Time
}

// SplitRenewed reports a drain's outcome in batch order from the set of
// ids the store renewed.
func SplitRenewed(refs []RunLeaseRef, renewed map[int64]struct{}) *RunRenewManyResult {
	out := &RunRenewManyResult{}
	if len(renewed) > 0 {
		out.Renewed = make([]int64, 0, len(renewed))
	}
	for i, r := range refs {
		if _, ok := renewed[r.ID]; ok {
			out.Renewed = append(out.Renewed, r.ID)
		} else {
			out.Lost = append(out.Lost, i)
		}
	}
	return out
}

// RunCompleteParams completes a run.
type RunCompleteParams struct {
	ID, Fence int64
	Result    []byte // JSON; optional
}

// Class implements lease.Classed.
func (*RunCompleteParams) Class() lease.Durability { return lease.SyncCritical }

// MaxRunCompleteBatch bounds one RunCompleteMany batch.
const MaxRunCompleteBatch = 10000

// RunCompleteManyParams completes a batch of runs (a batch completer's
// flush).
type RunCompleteManyParams struct {
	Runs []RunCompletion
}

// Class implements lease.Classed: each completion is a fenced write the
// runner waits on, batched only to share the commit.
func (*RunCompleteManyParams) Class() lease.Durability { return lease.SyncCritical }

// RunCompletion is one completion of a batch.
type RunCompletion struct {
	ID, Fence int64
	Result    []byte // JSON; optional
}

// RunCompleteManyResult says what became of a batch.
type RunCompleteManyResult struct {
	// Completed are the ids of the runs completed, in batch order.
	Completed []int64
	// Fenced are the indexes into the batch, ascending, of the
	// completions refused: the run was not running under that fence (it
	// was reclaimed, cancelled, finished or claimed again), or does not
	// exist. Those runs are unchanged; a caller that must tell the cases
	// apart reads the run.
	Fenced []int
}

// RunFailParams fails an attempt.
type RunFailParams struct {
	ID, Fence  int64
	Reason     string
	RetryAfter time.Duration // from runs.Backoff
}

// Class implements lease.Classed.
func (*RunFailParams) Class() lease.Durability { return lease.SyncCritical }

// RunBlockParams blocks a run.
type RunBlockParams struct {
	ID, Fence int64
	Reason    string
}

// Class implements lease.Classed.
func (*RunBlockParams) Class() lease.Durability { return lease.SyncCritical }

// RunUnblockParams unblocks a run.
type RunUnblockParams struct{ ID int64 }

// Class implements lease.Classed.
func (*RunUnblockParams) Class() lease.Durability { return lease.SyncCritical }

// RunCancelParams cancels a run.
type RunCancelParams struct {
	ID     int64
	Reason string
}

// Class implements lease.Classed.
func (*RunCancelParams) Class() lease.Durability { return lease.SyncCritical }

// RunReclaimParams bounds one reclaim batch.
type RunReclaimParams struct {
	Limit int // <= 0 means 100
}

// Class implements lease.Classed.
func (*RunReclaimParams) Class() lease.Durability { return lease.SyncCritical }

// RunReclaimResult is one reclaim batch.
type RunReclaimResult struct {
	Reclaimed []*Run // after the reclaim: available or failed, fence+1
}

// RunFencedError is a runner's write refused because the run is no longer
// held under its fence. It unwraps to ErrFenced, or to ErrLeaseExpired for
// a renewal of a lease that expired under the same fence.
type RunFencedError struct {
	Op           string
	ID           int64
	Fence        int64 // the fence the write carried
	CurrentFence int64
	State        runs.State
	Expired      bool
	// OwnerMismatch: the fence and state are current, but the run is held
	// by another owner than the one the renewal named.
	OwnerMismatch bool
}

func (e *RunFencedError) Error() string {
	if e.Expired {
		return fmt.Sprintf("%s of run %d under fence %d refused: lease expired on the store clock", e.Op, e.ID, e.Fence)
	}
	if e.OwnerMismatch {
		return fmt.Sprintf("%s of run %d under fence %d refused: the run is held by another owner", e.Op, e.ID, e.Fence)
	}
	return fmt.Sprintf("%s of run %d under fence %d refused: run is %s under fence %d", e.Op, e.ID, e.Fence, e.State, e.CurrentFence)
}

// Unwrap returns ErrFenced or ErrLeaseExpired.
func (e *RunFencedError) Unwrap() error {
	if e.Expired {
		return ErrLeaseExpired
	}
	return ErrFenced
}

// ClassifyRefusal explains why a runner's fenced write matched no row, from
// the run as it is now (nil if it does not exist). Drivers call it after a
// conditional UPDATE returned nothing; the write has changed nothing.
func ClassifyRefusal(op string, id, fence int64, owner string, cur *Run, now time.Time, renew bool) error {
	if cur == nil {
		return fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	e := &RunFencedError{Op: op, ID: id, Fence: fence, CurrentFence: cur.Fence, State: cur.State}
	if renew && cur.Fence == fence && cur.State == runs.StateRunning {
		e.OwnerMismatch = cur.Owner != owner
		e.Expired = !e.OwnerMismatch && !now.Before(cur.ExpiresAt)
	}
	return e
}
