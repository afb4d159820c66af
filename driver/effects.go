package driver

import (
	"context"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// EffectStore is the effect ledger and the per-run event log of runs
// (SPEC §3). Every write is fenced by the run: it is accepted only while
// runs.fence = $fence AND runs.state = 'running', checked in the same
// statement or transaction that writes.
type EffectStore interface {
	// RunEffectBegin starts an idempotent effect (run, key) under fence:
	//   - already committed → EffectCommitted with the stored result; the
	//     caller must not invoke the effect again;
	//   - an intent exists that was not committed (under an older fence, or
	//     under this one after a failed or interrupted invocation) →
	//     EffectUncertain: the effect may or may not have happened; it is
	//     never overwritten and never silently re-run — the handler
	//     reconciles and calls RunEffectResolve;
	//   - otherwise the intent is inserted under fence → EffectStarted: the
	//     caller may invoke the effect once, then RunEffectCommit.
	RunEffectBegin(ctx context.Context, p *RunEffectParams) (*Effect, error)
	// RunEffectCommit records the result of an effect this fence started,
	// WHERE the intent's fence = $fence and the run is still held under it.
	// ErrFenced if not (the result is discarded; the intent stays and will
	// be uncertain to the next holder).
	RunEffectCommit(ctx context.Context, p *RunEffectCommitParams) (*Effect, error)
	// RunEffectResolve settles an uncertain effect after the handler
	// reconciled it (e.g. asked the downstream system with the idempotency
	// key): Committed records that it happened, with Result; otherwise the
	// intent is removed and the next RunEffectBegin starts it afresh. Fenced
	// by the run. ErrConflict if the effect is already committed.
	RunEffectResolve(ctx context.Context, p *RunEffectResolveParams) (*Effect, error)
	// RunEffectList returns a run's effects ordered by key.
	RunEffectList(ctx context.Context, p *RunEffectListParams) ([]*Effect, error)

	// RunTx runs fn inside one store transaction together with a locking
	// fence check of the run (Postgres: SELECT … FOR SHARE on the run row,
	// held to commit, so no reclaim or cancel can commit in between;
	// SQLite: the single writer) and the commit of effect (run, key). If the
	// key is already committed, fn is not called and Done is reported; an
	// uncommitted intent of the key (from RunEffectBegin) is ErrConflict —
	// it must be resolved, not overtaken by a transaction. fn's tx is a
	// pgx.Tx on Postgres and a *sql.Tx on SQLite; fn must use only tx and
	// must not commit or roll it back. If fn returns an error, nothing of
	// the transaction is kept. Exactly once, never uncertain.
	RunTx(ctx context.Context, p *RunTxParams, fn func(tx any) error) (*RunTxResult, error)

	// RunEventAppend inserts events of any number of runs in one
	// transaction (multi-row INSERT … ON CONFLICT DO NOTHING), each accepted
	// only if its run is running under the event's fence. A retried batch
	// never duplicates: (run, fence, seq) is the key.
	RunEventAppend(ctx context.Context, p *RunEventAppendParams) (*RunEventAppendResult, error)
	// RunEventList returns a run's events after (AfterFence, AfterSeq) in
	// (fence, seq) order, at most Limit.
	RunEventList(ctx context.Context, p *RunEventListParams) ([]*RunEvent, error)
	// A queue's events in commit order (events_queue.go).
	QueueEventLister
}

// EffectOutcome is what RunEffectBegin found.
type EffectOutcome string

// Effect outcomes.
const (
	EffectStarted   EffectOutcome = "started"   // intent inserted under this fence: invoke, then commit
	EffectCommitted EffectOutcome = "committed" // done before: use Result, do not invoke
	EffectUncertain EffectOutcome = "uncertain" // an intent without a commit: reconcile, then resolve
)

// Effect is one row of the effect ledger.
type Effect struct {
	RunID       int64
	Key         string
	Fence       int64 // the fence the intent was inserted under
	Committed   bool
	Result      []byte
	CreatedAt   time.Time
	CommittedAt time.Time // zero until committed
	// Outcome is set by RunEffectBegin only.
	Outcome EffectOutcome
}

// RunEffectParams names an effect of a run held under Fence.
type RunEffectParams struct {
	RunID, Fence int64
	Key          string
}

// Class implements lease.Classed.
func (*RunEffectParams) Class() lease.Durability { return lease.SyncCritical }

// RunEffectCommitParams commits an effect's result.
type RunEffectCommitParams struct {
	RunID, Fence int64
	Key          string
	Result       []byte // JSON; optional
}

// Class implements lease.Classed.
func (*RunEffectCommitParams) Class() lease.Durability { return lease.SyncCritical }

// RunEffectResolveParams settles an uncertain effect.
type RunEffectResolveParams struct {
	RunID, Fence int64
	Key          string
	Committed    bool   // it happened (record Result); false: it did not (remove the intent)
	Result       []byte // JSON; optional
}

// Class implements lease.Classed.
func (*RunEffectResolveParams) Class() lease.Durability { return lease.SyncCritical }

// RunEffectListParams names a run.
type RunEffectListParams struct{ RunID int64 }

// RunTxParams names the transactional effect.
type RunTxParams struct {
	RunID, Fence int64
	Key          string
	Result       []byte // JSON recorded with the effect; optional
}

// Class implements lease.Classed.
func (*RunTxParams) Class() lease.Durability { return lease.SyncCritical }

// RunTxResult reports a RunTx.
type RunTxResult struct {
	Effect *Effect
	Done   bool // the key was already committed: fn was not called
}

// RunEventInsert is one event to append.
type RunEventInsert struct {
	RunID, Fence int64
	Seq          int64 // 1, 2, 3 … within (run, fence), assigned by the runner
	Kind         string
	Payload      []byte // JSON
}

// RunEventAppendParams is one group-committed batch.
type RunEventAppendParams struct{ Events []RunEventInsert }

// Class implements lease.Classed: many runs' events share one transaction.
func (*RunEventAppendParams) Class() lease.Durability { return lease.DurableBatched }

// RunEventAppendResult says which events were refused because their run was
// no longer held under their fence (by index into the batch). Events already
// present (a retried batch) count as accepted.
type RunEventAppendResult struct {
	Fenced []int
}

// RunEvent is one stored event.
type RunEvent struct {
	RunID, Fence, Seq int64
	Kind              string
	Payload           []byte
	CreatedAt         time.Time
}

// RunEventListParams reads a run's events.
type RunEventListParams struct {
	RunID                int64
	AfterFence, AfterSeq int64
	Limit                int // <= 0 means 1000
}

// EventNotifier is an optional interface of an EffectStore whose store can
// tell other processes that events were committed (Postgres LISTEN/NOTIFY).
// Callers find it by type assertion on the store, as hashicorp/raft finds
// its optional transport interfaces:
//
//	if n, ok := store.(driver.EventNotifier); ok { … }
//
// A notification is only a wake-up; the table stays the source of truth,
// and a consumer reads it (RunEventList) after every wake-up.
type EventNotifier interface {
	// RunEventsNotify returns a channel of run ids that got new durable
	// events — sent only after the events committed, by this process or any
	// other sharing the store. Delivery is best effort: ids may coalesce or
	// be dropped when the consumer is slow, and none are seen while the
	// listener reconnects, so a consumer keeps a poll as a fallback. An id
	// of 0 (never a run id) means events of any run may have been missed
	// (e.g. after a reconnect): every consumer should read again. The
	// channel is closed when ctx ends (or the store closes).
	RunEventsNotify(ctx context.Context) (<-chan int64, error)
}
