package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// heldRun is the fence check every effect write makes: the run row, locked
// FOR SHARE to the end of the (autocommit) transaction if it is running
// under the fence. A reclaim, cancel or completion therefore commits
// either before the write (which then finds nothing) or after it, never
// in between.
const heldRun = `r AS (SELECT id FROM runs WHERE id = $2 AND fence = $3 AND state = 'running' FOR SHARE)`

// commitEffect records the result of an intent this fence inserted: the
// intent's fence must be the caller's, it must not be committed yet, and
// the run must still be held under that fence.
const commitEffect = `WITH ` + storeNowSQL + `, ` + heldRun + `
UPDATE run_effects e SET committed = true, result = $5, committed_at = t.now
FROM r, t
WHERE e.run_id = r.id AND e.key = $4 AND e.fence = $3 AND NOT e.committed
RETURNING e.run_id, e.key, e.fence, e.committed, e.result, e.created_at, e.committed_at`

// resolveCommitted settles an uncertain intent as done: it is committed
// with the result under the current fence, whatever fence inserted it.
const resolveCommitted = `WITH ` + storeNowSQL + `, ` + heldRun + `
UPDATE run_effects e SET committed = true, result = $5, committed_at = t.now, fence = $3
FROM r, t
WHERE e.run_id = r.id AND e.key = $4 AND NOT e.committed
RETURNING e.run_id, e.key, e.fence, e.committed, e.result, e.created_at, e.committed_at`

// resolveNotDone settles an uncertain intent as not done: it is removed,
// and the next RunEffectBegin starts the effect afresh. It writes no time,
// but takes $1 like every settling statement (t is not referenced).
const resolveNotDone = `WITH ` + storeNowSQL + `, ` + heldRun + `
DELETE FROM run_effects e USING r
WHERE e.run_id = r.id AND e.key = $4 AND NOT e.committed
RETURNING e.run_id, e.key, e.fence, e.committed, e.result, e.created_at, e.committed_at`

// readRunEffect is the refusal path's read after a settling statement
// matched nothing: the store time, the run as it is now, and the effect's
// fence and committed flag (NULL when there is no effect).
const readRunEffect = `SELECT coalesce($1::timestamptz, clock_timestamp()), ` + runColumnsR + `, e.fence, e.committed
FROM runs r LEFT JOIN run_effects e ON e.run_id = r.id AND e.key = $3
WHERE r.id = $2`

// effectNow is an effect as the refusal path read it.
type effectNow struct {
	fence     *int64 // nil: no effect
	committed *bool
}

// settleRefusal explains a settling write that matched nothing, from the
// run and effect as they are now. cur is nil when the run is missing.
type settleRefusal func(cur *driver.Run, now time.Time, e effectNow) error

// settleEffect is the one path of RunEffectCommit and RunEffectResolve:
// one conditional statement in autocommit (one round trip, one commit) on
// the critical pool. When it matches nothing it wrote nothing, and a
// second round trip reads the run and the effect so refuse can say why.
func (d *store) settleEffect(ctx context.Context, op string, crit bool, id, fence int64, key string,
	query string, args []any, refuse settleRefusal) (*driver.Effect, error) {
	fail := func(err error) error {
		return fmt.Errorf("postgres: %s %q of run %d: %w", op, key, id, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, crit)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	var x effectRow
	err = conn.QueryRow(ctx, query, args...).Scan(x.dest()...)
	if err == nil {
		return x.effect(), nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fail(mapWriteError(err))
	}
	cur, now, e, err := readEffect(ctx, conn, d.fakeNow(), id, key)
	if err != nil {
		return nil, fail(fmt.Errorf("reading the run after a refused write: %w", err))
	}
	if cur == nil || cur.Fence != fence || cur.State != runs.StateRunning {
		return nil, driver.ClassifyRefusal(op, id, fence, "", cur, now, false)
	}
	return nil, refuse(cur, now, e)
}

// readEffect reads the run, its effect key and the store time on conn;
// cur is nil when the run does not exist.
func readEffect(ctx context.Context, conn *pgxpool.Conn, fake *time.Time, id int64, key string) (
	cur *driver.Run, now time.Time, e effectNow, err error) {
	var x runRow
	dest := append(append([]any{&now}, x.dest()...), &e.fence, &e.committed)
	err = conn.QueryRow(ctx, readRunEffect, fake, id, key).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, time.Time{}, e, nil
	}
	if err != nil {
		return nil, time.Time{}, e, err
	}
	return x.run(), now.UTC(), e, nil
}

// RunEffectCommit implements driver.EffectStore. The run is held under the
// fence when a refusal gets here, so the effect explains it:
//   - no intent, or an intent another fence inserted: ErrFenced (this
//     fence did not start the effect; an older intent stays uncertain for
//     its holder to resolve);
//   - already committed under this fence: ErrConflict. A retried commit
//     whose first answer was lost gets this too; RunEffectBegin then
//     reports it committed with the stored result.
func (d *store) RunEffectCommit(ctx context.Context, p *driver.RunEffectCommitParams) (*driver.Effect, error) {
	result := p.Result // compact or nil: normalized by driver.Validating
	const op = "effect commit"
	return d.settleEffect(ctx, op, critical(p), p.RunID, p.Fence, p.Key, commitEffect,
		[]any{d.fakeNow(), p.RunID, p.Fence, p.Key, result},
		func(_ *driver.Run, _ time.Time, e effectNow) error {
			switch {
			case e.fence == nil:
				return fmt.Errorf("%s of %q of run %d under fence %d refused: no intent was begun: %w",
					op, p.Key, p.RunID, p.Fence, driver.ErrFenced)
			case *e.fence != p.Fence:
				return fmt.Errorf("%s of %q of run %d under fence %d refused: its intent is under fence %d: %w",
					op, p.Key, p.RunID, p.Fence, *e.fence, driver.ErrFenced)
			case *e.committed:
				return fmt.Errorf("%s of %q of run %d under fence %d refused: already committed: %w",
					op, p.Key, p.RunID, p.Fence, driver.ErrConflict)
			}
			return fmt.Errorf("%s of %q of run %d: %w: %w", op, p.Key, p.RunID, errEffectRace, driver.ErrConflict)
		})
}

// RunEffectResolve implements driver.EffectStore: the intent must exist
// (ErrNotFound) and not be committed (ErrConflict). Committed records it
// under the current fence with the result; otherwise the intent is
// deleted, and the deleted intent is returned.
func (d *store) RunEffectResolve(ctx context.Context, p *driver.RunEffectResolveParams) (*driver.Effect, error) {
	result := p.Result // compact or nil: normalized by driver.Validating
	query, args := resolveCommitted, []any{d.fakeNow(), p.RunID, p.Fence, p.Key, result}
	if !p.Committed {
		query, args = resolveNotDone, args[:4]
	}
	const op = "effect resolve"
	return d.settleEffect(ctx, op, critical(p), p.RunID, p.Fence, p.Key, query, args,
		func(_ *driver.Run, _ time.Time, e effectNow) error {
			switch {
			case e.fence == nil:
				return fmt.Errorf("effect %q of run %d: %w", p.Key, p.RunID, driver.ErrNotFound)
			case *e.committed:
				return fmt.Errorf("%s of %q of run %d refused: already committed under fence %d: %w",
					op, p.Key, p.RunID, *e.fence, driver.ErrConflict)
			}
			return fmt.Errorf("%s of %q of run %d: %w: %w", op, p.Key, p.RunID, errEffectRace, driver.ErrConflict)
		})
}
