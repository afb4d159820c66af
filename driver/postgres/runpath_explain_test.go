package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// explained is what EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) says of
// one statement that the load on the machine does not bend: the WAL it
// wrote, the buffers it touched and dirtied, the plan's node types and
// indexes.
type explained struct {
	walRecords, walBytes, walFPI, hit, dirtied, read float64
	nodes                                            []string
	execMs                                           float64
	// scanned is the rows the plan's scans of runs produced (actual
	// rows × loops), the rows of runs a statement read to find its own.
	scanned float64
}

func explain(t *testing.T, ctx context.Context, tx interface {
	QueryRow(context.Context, string, ...any) interface{ Scan(...any) error }
}, q string, args ...any) explained {
	t.Helper()
	var raw []byte
	require.NoError(t, tx.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) "+q, args...).Scan(&raw))
	var doc []struct {
		Plan          map[string]any `json:"Plan"`
		ExecutionTime float64        `json:"Execution Time"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	p := doc[0].Plan
	f := func(k string) float64 { v, _ := p[k].(float64); return v }
	e := explained{walRecords: f("WAL Records"), walBytes: f("WAL Bytes"), walFPI: f("WAL FPI"),
		hit: f("Shared Hit Blocks"), dirtied: f("Shared Dirtied Blocks"), read: f("Shared Read Blocks"), execMs: doc[0].ExecutionTime}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		s, _ := n["Node Type"].(string)
		if ix, ok := n["Index Name"].(string); ok {
			s += " " + ix
		} else if rel, ok := n["Relation Name"].(string); ok {
			s += " " + rel
		}
		e.nodes = append(e.nodes, s)
		if rel, _ := n["Relation Name"].(string); rel == "runs" && strings.HasSuffix(n["Node Type"].(string), "Scan") {
			rows, _ := n["Actual Rows"].(float64)
			loops, _ := n["Actual Loops"].(float64)
			e.scanned += rows * loops
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			walk(k.(map[string]any))
		}
	}
	walk(p)
	return e
}

// noAutovacuum turns autovacuum off for d's runs table (in the test's own
// schema): the explained statements' WAL depends on whether a vacuum has
// pruned the table's pages yet, and a vacuum that autovacuum starts
// between two explained statements (it did, under CI's load: the plain
// claim wrote 4.45 records a run, the limited one then 5.02 instead of
// 5.47) makes their difference a matter of timing. It did not settle it:
// a statement's own read prunes too (holdSnapshot).
func noAutovacuum(t *testing.T, d *Driver) {
	t.Helper()
	_, err := d.s.general.Exec(context.Background(), "ALTER TABLE runs SET (autovacuum_enabled = off)")
	require.NoError(t, err)
}

// holdSnapshot keeps a REPEATABLE READ snapshot open on a connection of
// its own until the test ends, so that no row version the test makes dead
// after this call can be pruned while it runs. Turning autovacuum off is
// not enough for statements that commit between explained ones: any
// statement that reads a page prunes it on the way (heap_page_prune_opt;
// at fillfactor 33 a page always has room to want it) once the dead
// versions are older than every snapshot on the server — and the shared
// server's other tests' transactions decide when that is. A prune is WAL
// of its own: CI saw the plain claim prune its pages (4.45 WAL records a
// run, 4.00 unpruned) and the limited one, a moment later, not (5.02, not
// 5.47), and their difference fall to 0.57. Under the held snapshot
// neither prunes: 4.00 and 5.02, whatever the rest of the server does.
func holdSnapshot(t *testing.T, d *Driver) {
	t.Helper()
	ctx := context.Background()
	tx, err := d.s.general.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	var one int
	require.NoError(t, tx.QueryRow(ctx, "SELECT 1").Scan(&one)) // the snapshot is taken at the first statement
}

type pgxQueryRower struct {
	q func(context.Context, string, ...any) interface{ Scan(...any) error }
}

func (r pgxQueryRower) QueryRow(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
	return r.q(ctx, q, args...)
}

// TestRunPathExplained profiles the run path's two writing statements on
// Postgres without a clock: a plain claim of a batch of 100 (claimRunsPlain)
// and its completion (completeRuns), each under EXPLAIN (ANALYZE, BUFFERS,
// WAL) in one transaction, with the table's update counters of that
// transaction (pg_stat_xact_user_tables). It pins what docs/BENCHMARKS.md
// quotes: the claim reads the runs_claimable index (no scan of runs), and
// the completion finds its runs by id, not by scanning every held run; and
// a transition writes one heap tuple and one entry per index whose
// predicate the new row matches — no update is HOT, since state, which
// every transition changes, is in the partial indexes' predicates.
func TestRunPathExplained(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(t, Config{})
	noAutovacuum(t, d)
	const batch = 100
	// A table of 10,000 runs, so that the planner's choices are those of
	// a real one (on a few pages a sequential scan is the cheapest plan).
	es := make([]runs.Enqueue, 10*batch)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "q", Payload: []byte(`{"n":1}`)}
	}
	for range 10 {
		_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
		require.NoError(t, err)
	}
	tx, err := d.s.general.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	qr := pgxQueryRower{q: func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
		return tx.QueryRow(ctx, q, args...)
	}}
	claim := explain(t, ctx, qr, claimRunsPlain, nil, "q", batch, "o", 5*time.Minute)
	ids, fences := runningIDs(t, tx, `SELECT id, fence FROM runs WHERE state = 'running' ORDER BY id`)
	require.Len(t, ids, batch)
	// Many more runs held than the batch completes, as a worker of high
	// concurrency holds them: the completion must still find its rows by
	// id, not scan the held set.
	_, err = tx.Exec(ctx, claimRunsPlain, nil, "q", 8*batch, "o", 5*time.Minute)
	require.NoError(t, err)
	// As autovacuum's analyze would have it by now.
	_, err = tx.Exec(ctx, "ANALYZE runs")
	require.NoError(t, err)
	// The completion's UPDATE, the body of leasehold_complete_runs
	// (migration 0024), under the function's own settings, rolled back;
	// then the call itself, whose WAL is the figure.
	var body string
	var conf []string
	require.NoError(t, tx.QueryRow(ctx, `SELECT prosrc, proconfig FROM pg_proc
		WHERE proname = 'leasehold_complete_runs' AND pronamespace = current_schema()::regnamespace`).Scan(&body, &conf))
	require.ElementsMatch(t, []string{"enable_seqscan=off", "enable_bitmapscan=off", "enable_indexscan=on", "jit=off"}, conf, "the completion's scan settings")
	for name, arg := range map[string]string{"ids": "($1::bigint[])", "fences": "($2::bigint[])", "results": "($3::bytea[])", "store_now": "($4::timestamptz)"} {
		body = regexp.MustCompile(`\b`+name+`\b`).ReplaceAllLiteralString(body, arg)
	}
	_, err = tx.Exec(ctx, "SAVEPOINT body; SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off")
	require.NoError(t, err)
	update := explain(t, ctx, qr, body, ids, fences, make([][]byte, batch), nil)
	_, err = tx.Exec(ctx, "ROLLBACK TO SAVEPOINT body")
	require.NoError(t, err)
	complete := explain(t, ctx, qr, completeRuns, nil, ids, fences, make([][]byte, batch))
	var upd, hot int64
	require.NoError(t, tx.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relid = 'runs'::regclass`).Scan(&upd, &hot))
	var indexes []string
	irows, err := tx.Query(ctx, `SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = 'runs'::regclass ORDER BY 1`)
	require.NoError(t, err)
	for irows.Next() {
		var s string
		require.NoError(t, irows.Scan(&s))
		indexes = append(indexes, s)
	}
	require.NoError(t, irows.Err())
	require.NoError(t, tx.Commit(ctx))

	for _, c := range []struct {
		name string
		e    explained
	}{{"claim", claim}, {"complete", complete}, {"complete's UPDATE", update}} {
		t.Logf("%s of %d: %.0f rows of runs scanned; WAL %.0f records (%.2f per run), %.0f bytes (%.0f per run), %.0f full-page images; buffers hit %.0f, dirtied %.0f, read %.0f; %.2f ms (loaded machine: not a figure)\n  plan: %s",
			c.name, batch, c.e.scanned, c.e.walRecords, c.e.walRecords/batch, c.e.walBytes, c.e.walBytes/batch, c.e.walFPI,
			c.e.hit, c.e.dirtied, c.e.read, c.e.execMs, strings.Join(c.e.nodes, " > "))
		require.NotContains(t, strings.Join(c.e.nodes, ","), "Seq Scan runs", "%s scans the runs table", c.name)
	}
	t.Logf("runs: %d updates, %d HOT; indexes: %s", upd, hot, strings.Join(indexes, ", "))
	require.EqualValues(t, 11*batch, upd, "900 claimed, 100 of them completed (and 100 more rolled back: the UPDATE's explain)")
	require.Zero(t, hot, "no transition is HOT (state is in the partial indexes' predicates)")
	require.Contains(t, strings.Join(claim.nodes, ","), "runs_claimable", "the claim reads the claimable index")
	// The completion reads its batch's rows by id through runs_pkey, in
	// id order (its lock order: TestCompleteRunsLockInIdOrder), not the
	// 900 held, and joins nothing.
	require.Equal(t, []string{"ModifyTable runs", "Result", "Index Scan runs_pkey"}, update.nodes, "the completion's UPDATE")
	require.LessOrEqual(t, update.scanned, float64(batch), "the completion reads its batch's rows, not the 900 held")
	// A claim of a queue without limits writes per run: the new heap
	// tuple, the old one's lock and xmax (SKIP LOCKED), and an entry in
	// runs_pkey and runs_expiry (runs_running_counted only for a limited
	// queue's runs, migration 0017); a completion the heap tuple,
	// runs_pkey and runs_finished (no lock of its own since migration
	// 0024: 4.98 per run with its locking CTE). The bounds leave room for
	// page splits and catch a new index on the path (with
	// runs_running_queue, before 0017, a claim wrote 6.06 records per run)
	// and a claim whose new versions do not fit on their pages (before
	// fillfactor 50, migration 0022, heap_update wrote one more row-lock
	// record for each: 5.05 per run). The UPDATE explained above writes
	// 3.03 per run; the call after it 3.97, its page holding the versions
	// the rolled-back UPDATE left besides the claim's, all of this one
	// transaction and none prunable, so that its new versions move to
	// another page (one more lock record each). Separate transactions:
	// TestRunTransitionsStayOnTheirPage.
	require.LessOrEqual(t, claim.walRecords/batch, 4.5, fmt.Sprintf("claim WAL records per run: %s", strings.Join(indexes, ",")))
	require.LessOrEqual(t, update.walRecords/batch, 3.5, "completion WAL records per run")
	require.LessOrEqual(t, complete.walRecords/batch, 4.5, "completion WAL records per run, after the rolled-back one")
}

// TestWideRunBatchesFindTheirRowsByKey pins the plans of the run
// statements that take a wide worker's batch: 1,000 runs (a worker of
// 1,000 handlers claims, renews and may lose as many at once) in a table
// of 20,000 with 10,000 held. Joined to their batch alone (FROM c …
// WHERE r.id = c.id, or JOIN runs r ON r.id = c.id), the planner
// estimated a thousand primary-key probes dearer than hashing the whole
// table and chose a Seq Scan of runs under a Hash Join: every claim,
// every renewal drain and every reclaim read every row of the table. In
// a drain, building that hash for the claim was a third of the server's
// CPU (perf, docs/BENCHMARKS.md stop 27). The batch's ids stated on runs
// (r.id = ANY(…)) give the planner the primary key to find them by, as
// the completion's l and claimRunsControlled already did.
func TestWideRunBatchesFindTheirRowsByKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(t, Config{})
	const total, held, batch = 20000, 10000, 1000
	es := make([]runs.Enqueue, 2000)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "q", Payload: []byte(`{"n":1}`)}
	}
	for range total / len(es) {
		_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
		require.NoError(t, err)
	}
	_, err := d.s.general.Exec(ctx, "ANALYZE runs")
	require.NoError(t, err)
	tx, err := d.s.general.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	qr := pgxQueryRower{q: func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
		return tx.QueryRow(ctx, q, args...)
	}}
	check := func(name string, e explained, maxScanned float64) {
		t.Helper()
		t.Logf("%s of %d (%d runs, %d held): %.0f rows of runs scanned; WAL %.2f records per run\n  plan: %s",
			name, batch, total, held, e.scanned, e.walRecords/batch, strings.Join(e.nodes, " > "))
		require.NotContains(t, strings.Join(e.nodes, ","), "Seq Scan runs", "the %s reads the whole table", name)
		require.LessOrEqual(t, e.scanned, maxScanned, "the %s reads more than its batch", name)
	}
	claim := explain(t, ctx, qr, claimRunsPlain, nil, "q", batch, "o", 5*time.Minute)
	check("claim", claim, 3*batch)
	// The lock, the new version on the same page, runs_pkey, runs_expiry
	// (migration 0022; 5.0 before it).
	require.LessOrEqual(t, claim.walRecords/batch, 4.5, "claim WAL records per run")

	_, err = tx.Exec(ctx, claimRunsPlain, nil, "q", held-batch, "o", 5*time.Minute)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "ANALYZE runs")
	require.NoError(t, err)
	ids, fences := runningIDs(t, tx, `SELECT id, fence FROM runs WHERE state = 'running' ORDER BY id LIMIT $1`, batch)
	require.Len(t, ids, batch)
	check("renewal", explain(t, ctx, qr, renewRuns, nil, ids, fences, "o", 5*time.Minute, []string{}), 3*batch)
	// Every held lease expired an hour ago on the statement's clock: the
	// reclaim's c reads the expired ones from runs_expiry to take the
	// first 1,000 in (expires_at, id) order, then finds those by key.
	check("reclaim", explain(t, ctx, qr, reclaimRuns, time.Now().Add(time.Hour), batch), held+3*batch)
}

// runningIDs reads the ids and fences q selects (id, fence), in its order.
func runningIDs(t *testing.T, tx pgx.Tx, q string, args ...any) (ids, fences []int64) {
	t.Helper()
	rows, err := tx.Query(context.Background(), q, args...)
	require.NoError(t, err)
	for rows.Next() {
		var id, fence int64
		require.NoError(t, rows.Scan(&id, &fence))
		ids, fences = append(ids, id), append(fences, fence)
	}
	require.NoError(t, rows.Err())
	return ids, fences
}
