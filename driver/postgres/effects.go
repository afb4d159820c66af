package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
)

var _ driver.EffectStore = (*store)(nil)

// effectColumns are the run_effects columns every effect statement
// returns, in the order effectRow.dest scans them.
const effectColumns = `run_id, key, fence, committed, result, created_at, committed_at`

// effectRow is the scan target of one run_effects row; effect converts it,
// reading NULLs as zero values and times in UTC.
type effectRow struct {
	e         driver.Effect
	created   time.Time
	committed *time.Time
}

func (x *effectRow) dest() []any {
	e := &x.e
	return []any{&e.RunID, &e.Key, &e.Fence, &e.Committed, &e.Result, &x.created, &x.committed}
}

func (x *effectRow) effect() *driver.Effect {
	e := x.e
	e.CreatedAt = x.created.UTC()
	if x.committed != nil {
		e.CommittedAt = x.committed.UTC()
	}
	return &e
}

// querier is what the effect statements run on: a pooled connection in
// autocommit, or RunTx's transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// beginEffect is RunEffectBegin (an intent: $5 false, no result) and the
// first statement of RunTx (a committed effect: $5 true, with its result)
// in one statement:
//
//   - r locks the run row FOR SHARE if, and only if, it is running under
//     the fence. The lock is held to the end of the transaction, so a
//     reclaim, cancel or completion (each an UPDATE of the row) waits for
//     this write to commit instead of committing in between; if one
//     committed while r waited, r re-checks the row's new version and
//     finds nothing;
//   - e is the existing effect, if any;
//   - i inserts the effect when there is none;
//   - the result is no row when the run is not held (nothing was
//     written), else one row whose outcome is started (i inserted),
//     committed or uncertain (e found). An empty outcome means neither:
//     a concurrent caller inserted the key after this statement's
//     snapshot, so ON CONFLICT did nothing and e could not see it; the
//     caller runs the statement again (a new snapshot sees it).
const beginEffect = `WITH ` + storeNowSQL + `,
r AS (SELECT id FROM runs WHERE id = $2 AND fence = $3 AND state = 'running' FOR SHARE),
e AS (SELECT ` + effectColumns + ` FROM run_effects WHERE run_id = $2 AND key = $4),
i AS (
    INSERT INTO run_effects (run_id, key, fence, committed, result, created_at, committed_at)
    SELECT r.id, $4, $3, $5::boolean, $6::bytea, t.now, CASE WHEN $5::boolean THEN t.now END
    FROM r, t
    WHERE NOT EXISTS (SELECT 1 FROM e)
    ON CONFLICT (run_id, key) DO NOTHING
    RETURNING ` + effectColumns + `
)
SELECT coalesce(x.outcome, ''), r.id, $4::text, coalesce(x.fence, 0), coalesce(x.committed, false),
    x.result, coalesce(x.created_at, t.now), x.committed_at
FROM r CROSS JOIN t LEFT JOIN (
    SELECT 'started' AS outcome, ` + effectColumns + ` FROM i
    UNION ALL
    SELECT CASE WHEN committed THEN 'committed' ELSE 'uncertain' END, ` + effectColumns + ` FROM e
) x ON true`

// beginAttempts bounds how often beginEffect is repeated after losing a
// race for the key. One repeat settles it: the insert that won had
// committed (ON CONFLICT waited for it), so the repeat's snapshot sees it.
const beginAttempts = 3

// errEffectRace reports an effect that kept changing under concurrent
// callers of one fence (which a runner never makes); the caller retries.
var errEffectRace = errors.New("the effect kept changing under concurrent callers")

// beginEffectOn runs beginEffect on q. held is false when the run is not
// running under fence (or does not exist): nothing was written.
func (d *store) beginEffectOn(ctx context.Context, q querier, id, fence int64, key string,
	committed bool, result []byte) (e *driver.Effect, held bool, err error) {
	for range beginAttempts {
		var x effectRow
		var outcome string
		err := q.QueryRow(ctx, beginEffect, d.fakeNow(), id, fence, key, committed, result).
			Scan(append([]any{&outcome}, x.dest()...)...)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, mapWriteError(err)
		}
		if outcome != "" {
			e := x.effect()
			e.Outcome = driver.EffectOutcome(outcome)
			return e, true, nil
		}
	}
	return nil, true, errEffectRace
}

// RunEffectBegin implements driver.EffectStore in one statement (one round
// trip, one commit) on the critical pool; a refusal reads the run in a
// second round trip to say why.
func (d *store) RunEffectBegin(ctx context.Context, p *driver.RunEffectParams) (*driver.Effect, error) {
	fail := func(err error) error {
		return fmt.Errorf("postgres: beginning effect %q of run %d: %w", p.Key, p.RunID, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, critical(p))
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	e, held, err := d.beginEffectOn(ctx, conn, p.RunID, p.Fence, p.Key, false, nil)
	if err != nil {
		return nil, fail(err)
	}
	if held {
		return e, nil
	}
	cur, now, err := readRun(ctx, conn, d.fakeNow(), p.RunID)
	if err != nil {
		return nil, fail(fmt.Errorf("reading the run after a refused write: %w", err))
	}
	return nil, driver.ClassifyRefusal("effect begin", p.RunID, p.Fence, "", cur, now, false)
}

// RunEffectList implements driver.EffectStore: a read, on the general
// pool. A run without effects, or no run at all, lists nothing.
func (d *store) RunEffectList(ctx context.Context, p *driver.RunEffectListParams) ([]*driver.Effect, error) {
	fail := func(err error) error {
		return fmt.Errorf("postgres: listing effects of run %d: %w", p.RunID, withCtx(ctx, err))
	}
	conn, err := d.acquire(ctx, false)
	if err != nil {
		return nil, fail(err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT `+effectColumns+` FROM run_effects WHERE run_id = $1 ORDER BY key`, p.RunID)
	if err != nil {
		return nil, fail(err)
	}
	defer rows.Close()
	var out []*driver.Effect
	for rows.Next() {
		var x effectRow
		if err := rows.Scan(x.dest()...); err != nil {
			return nil, fail(err)
		}
		out = append(out, x.effect())
	}
	if err := rows.Err(); err != nil {
		return nil, fail(err)
	}
	return out, nil
}
