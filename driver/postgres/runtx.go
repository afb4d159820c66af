package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// runTxOp names RunTx in its refusals, as SQLite's does.
const runTxOp = "effect tx"

// checkAndCommit is RunTx's last round trip: the fence checked again
// after fn, then COMMIT, in one simple-protocol message. fn's statements
// run in this transaction, so the row lock taken before fn does not stop fn
// itself from releasing the run or moving its fence; SQLite checks the
// same in its effect INSERT after fn. If the run is gone or no longer
// running under the fence, the DO block raises errFnMovedRun, which skips
// the COMMIT and leaves the transaction to roll back; its DETAIL is the
// run's state and fence as fn left them ("" if fn deleted it), for the
// refusal. The id and fence are formatted integers (a DO block takes no
// parameters).
const checkAndCommit = `DO $$DECLARE s text; f bigint; BEGIN
SELECT state, fence INTO s, f FROM runs WHERE id = %[1]d;
IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = '` + errFnMovedRun + `', MESSAGE = 'the transaction function deleted the run', DETAIL = '';
ELSIF s <> 'running' OR f <> %[2]d THEN
    RAISE EXCEPTION USING ERRCODE = '` + errFnMovedRun + `', MESSAGE = 'the transaction function moved the run', DETAIL = s || ' ' || f;
END IF;
END$$; COMMIT`

// Leasehold's own SQLSTATEs (class LH), one meaning each.
const (
	// errFnMovedRun is checkAndCommit's: the transaction function moved
	// the run.
	errFnMovedRun = "LH001"
	// errExpiredUnderLockCode is leasehold_append_expired_under_lock's
	// (migration 0021): a single append's lease expired while it waited
	// for the head's row lock.
	errExpiredUnderLockCode = "LH002"
)

// movedRunRefusal is the refusal of a RunTx whose fn moved its run, from
// checkAndCommit's DETAIL: the run as fn left it, as SQLite reports it.
func movedRunRefusal(p *driver.RunTxParams, detail string) error {
	if detail == "" {
		return driver.ClassifyRefusal(runTxOp, p.RunID, p.Fence, "", nil, time.Time{}, false)
	}
	state, fence, _ := strings.Cut(detail, " ")
	f, err := strconv.ParseInt(fence, 10, 64)
	if err != nil {
		return fmt.Errorf("postgres: transactional effect %q of run %d: the fence check's detail %q: %w", p.Key, p.RunID, detail, err)
	}
	cur := &driver.Run{ID: p.RunID, State: runs.State(state), Fence: f}
	return driver.ClassifyRefusal(runTxOp, p.RunID, p.Fence, "", cur, time.Time{}, false)
}

// RunTx implements driver.EffectStore: one READ COMMITTED transaction on
// the critical pool, three round trips besides fn's own — BEGIN; then
// beginEffect with the effect already committed, which locks the run row
// FOR SHARE if the run is running under the fence (held to COMMIT, so a
// reclaim, cancel or completion of the run, each an UPDATE of the row,
// waits for this transaction instead of committing in between) and inserts
// the committed effect unless the key exists; then fn; then the fence
// checked again (fn may have written the run's own row) and COMMIT in one
// message (checkAndCommit). If fn fails, or released the run or moved its
// fence, the rollback takes the effect with fn's writes.
//
// Inserting the effect before fn rather than after it costs nothing and
// serializes two calls of one key: the second waits on the first's
// uncommitted row, then sees it committed (Done, fn not called) or, if the
// first rolled back, goes ahead. Its committed_at is therefore the store
// time of the fence check, just before fn.
//
// fn holds a critical connection while it runs; keep it short (the
// session's idle_in_transaction_session_timeout, Config.StatementTimeout,
// ends a transaction left idle).
func (d *store) RunTx(ctx context.Context, p *driver.RunTxParams, fn func(tx any) error) (*driver.RunTxResult, error) {
	result := p.Result // compact or nil: normalized by driver.Validating
	fail := func(err error) error {
		return fmt.Errorf("postgres: transactional effect %q of run %d: %w", p.Key, p.RunID, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	// Rolls back whatever is left open: a refusal, fn's error, a failed
	// statement, a panic in fn. It reads the connection's status, so it
	// costs nothing after COMMIT.
	defer d.endTx(ctx, conn)

	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, fail(err)
	}
	e, held, err := d.beginEffectOn(ctx, tx, p.RunID, p.Fence, p.Key, true, result)
	if err != nil {
		return nil, fail(err)
	}
	if !held {
		d.endTx(ctx, conn) // release the transaction before the refusal's read
		cur, now, err := readRun(ctx, conn, d.fakeNow(), p.RunID)
		if err != nil {
			return nil, fail(fmt.Errorf("reading the run after a refused write: %w", err))
		}
		return nil, driver.ClassifyRefusal(runTxOp, p.RunID, p.Fence, "", cur, now, false)
	}
	switch e.Outcome {
	case driver.EffectCommitted:
		if err := tx.Commit(ctx); err != nil {
			return nil, fail(fmt.Errorf("commit: %w", err))
		}
		e.Outcome = ""
		return &driver.RunTxResult{Effect: e, Done: true}, nil
	case driver.EffectUncertain:
		return nil, fmt.Errorf("effect tx of %q of run %d refused: an intent begun under fence %d was never committed; resolve it first: %w",
			p.Key, p.RunID, e.Fence, driver.ErrConflict)
	}
	if err := fn(tx); err != nil {
		return nil, fmt.Errorf("postgres: transactional effect %q of run %d: rolled back: %w", p.Key, p.RunID, err)
	}
	if conn.Conn().PgConn().TxStatus() == 'I' {
		return nil, fail(errors.New("commit: fn ended the transaction itself"))
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(checkAndCommit, p.RunID, p.Fence)); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == errFnMovedRun {
			return nil, movedRunRefusal(p, pe.Detail)
		}
		return nil, fail(fmt.Errorf("fence check and commit: %w", mapWriteError(err)))
	}
	e.Outcome = ""
	return &driver.RunTxResult{Effect: e}, nil
}
