package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// groupCommit shares one writer transaction — one commit, one fsync —
// between the run path's writes that queue for the single writer at the
// same time: a producer's RunEnqueue, a worker's RunClaim and its
// completer's RunCompleteMany. On SQLite they cannot run side by side
// anyway (one writer), and each paid a transaction of its own: BEGIN
// IMMEDIATE, COMMIT's WAL frames (the same hot pages of the runs table
// and its claim index written again by each) and an fsync, about 300µs of
// CPU per commit whatever it carried (docs/BENCHMARKS.md, stop 26). In the
// mixed shape that was a third of the CPU per run.
//
// A caller queues its op and waits; whoever finds no leader starts one
// (a goroutine of its own, so no caller's return waits on others' ops):
// it begins a BEGIN IMMEDIATE transaction, takes every op queued by then,
// runs them in queue order, each inside a SAVEPOINT, and commits once.
// An op that fails is rolled back to its savepoint alone and answered
// with its error; the others commit. A failed BEGIN answers every op of
// the group with its error (none was written); so does a failed COMMIT,
// which, as for any single transaction, may still leave the group
// committed after an I/O error on its fsync — the outcome a caller of a
// failed write must treat as unknown. Ops
// queued while a group is in flight form the next group, so a lone op pays
// what it paid before and a busy writer amortizes its commits.
//
// Every op is one of the driver's own statements, unchanged: each fence
// check stays inside its writing statement, evaluated under the writer
// lock as before. Ops in one group see each other's writes (a claim sees
// the runs an enqueue before it inserted), as they would have in
// consecutive transactions, and commit or fail together with them.
//
// An op's statements run with its caller's context less its cancellation:
// modernc.org/sqlite cancels a statement with sqlite3_interrupt, which
// acts on the whole connection and so on the group's other ops. A caller
// whose context ends before its op was taken returns at once and the op
// is dropped; once taken, the op runs to its end (a few statements) and
// the caller waits for it, so an error always means the op did not
// commit.
type groupCommit struct {
	mu      sync.Mutex // guards pending and leading
	pending []*groupOp
	leading bool

	// groups and ops count what was committed (or tried): ops/groups is
	// how many callers shared a commit (TestGroupCommitShares).
	groups, ops atomic.Int64
}

// errClosedDuringGroup answers a group whose store was closed before it ran.
var errClosedDuringGroup = errors.New("the store was closed")

// groupOp is one caller's write.
type groupOp struct {
	what  string          // names the op in a begin or commit error
	ctx   context.Context // the caller's, without its cancellation
	fn    func(ctx context.Context, tx *sql.Tx) error
	state atomic.Int32 // opQueued → opTaken (by the leader) or opDropped (by the caller)
	err   error        // set before done is closed
	done  chan struct{}
}

const (
	opQueued int32 = iota
	opTaken
	opDropped
)

// inGroupTx runs fn inside a savepoint of a shared writer transaction
// (groupCommit) and returns once that transaction committed (nil) or fn
// failed or the commit did (the error; nothing of fn was written). Call
// runPrepared before it (the group's savepoints are run statements) and
// prepare nothing inside fn: preparing needs the one writer connection,
// which the group holds.
func (d *store) inGroupTx(ctx context.Context, what string, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op := &groupOp{what: what, ctx: context.WithoutCancel(ctx), fn: fn, done: make(chan struct{})}
	g := &d.group
	g.mu.Lock()
	g.pending = append(g.pending, op)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if lead {
		go d.leadGroups()
	}
	select {
	case <-op.done:
		return op.err
	case <-ctx.Done():
		if op.state.CompareAndSwap(opQueued, opDropped) {
			return ctx.Err()
		}
		<-op.done // taken: it runs to its end
		return op.err
	}
}

// leadGroups commits groups until none is queued.
//
// It begins each transaction before it takes the queue, not after: the
// callers its last commit answered are readied on this goroutine's P and
// cannot queue their next op until it blocks or another P takes them, and
// BEGIN IMMEDIATE (its file locks, and the wait for the connection while
// any other write holds it) is that chance. Taken first, the queue held
// only the ops that had waited through the last commit — in the mixed
// shape every producer batch then paid a commit of its own besides the
// one it shared (docs/BENCHMARKS.md, stop 26).
func (d *store) leadGroups() {
	g := &d.group
	for {
		g.mu.Lock()
		if len(g.pending) == 0 {
			g.leading = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		tx, err := d.w.BeginTx(context.Background(), nil) // the group's; each op's statements use the op's own context
		g.mu.Lock()
		batch := g.pending
		g.pending = nil
		g.mu.Unlock()
		ops := batch[:0]
		for _, op := range batch {
			if op.state.CompareAndSwap(opQueued, opTaken) {
				ops = append(ops, op)
			}
		}
		switch {
		case len(ops) > 0:
			d.commitGroup(tx, err, ops)
		case err == nil: // every op was dropped
			_ = tx.Rollback()
		}
	}
}

// commitGroup runs ops in tx (or answers them with begin, BeginTx's
// error) and answers each.
func (d *store) commitGroup(tx *sql.Tx, begin error, ops []*groupOp) {
	g := &d.group
	g.groups.Add(1)
	g.ops.Add(int64(len(ops)))
	// answer closes every op, giving those that did not fail on their
	// own the group's error (nil: committed) in their own words.
	answer := func(step string, err error) {
		for _, op := range ops {
			if op.err == nil && err != nil {
				op.err = fmt.Errorf("sqlite: %s: %s: %w", op.what, step, err)
			}
			close(op.done)
		}
	}
	if begin != nil {
		answer("begin", begin)
		return
	}
	defer tx.Rollback()
	if len(ops) == 1 { // nothing to keep apart: the transaction is the op's
		var err error
		if ops[0].err = ops[0].fn(ops[0].ctx, tx); ops[0].err == nil {
			err = tx.Commit()
		}
		answer("commit", err)
		return
	}
	ctx := context.Background()
	d.runStmts.mu.Lock()
	st := d.runStmts.s // prepared by every op's caller before it queued
	d.runStmts.mu.Unlock()
	if st == nil { // Close ran since: the savepoints cannot be run
		answer("group savepoint", errClosedDuringGroup)
		return
	}
	written := false
	for _, op := range ops {
		if err := inSavepoint(ctx, tx, st, op); err != nil {
			answer("group savepoint", err) // the transaction is in an unknown state: write none of it
			return
		}
		written = written || op.err == nil
	}
	var err error
	if written {
		err = tx.Commit()
	}
	answer("commit", err)
}

// inSavepoint runs op inside a savepoint of tx: on op's error (kept in
// op.err) its writes are undone and the transaction goes on. The error it
// returns is the savepoint's own, after which tx must not commit.
func inSavepoint(ctx context.Context, tx *sql.Tx, st *runStmts, op *groupOp) error {
	if _, err := tx.StmtContext(ctx, st.savepoint).ExecContext(ctx); err != nil {
		return err
	}
	if op.err = op.fn(op.ctx, tx); op.err != nil {
		if _, err := tx.StmtContext(ctx, st.rollbackSavepoint).ExecContext(ctx); err != nil {
			return fmt.Errorf("rolling back after %w: %w", op.err, err)
		}
	}
	_, err := tx.StmtContext(ctx, st.releaseSavepoint).ExecContext(ctx)
	return err
}
