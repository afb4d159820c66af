package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestRunListFiltersExplained: the dashboard's owner filter and unique-key
// search read an index, not the runs table, on a table of 10,000 runs of
// which 20 are held: under EXPLAIN ANALYZE the plan has no sequential scan
// of runs and reads at most the held runs (owner) or the key's one run
// (key) — with the planner's custom plan and with a generic one (a
// prepared statement's, where the parameter's value is unknown), which is
// why the statements carry the partial indexes' literal predicates.
func TestRunListFiltersExplained(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(t, Config{})
	const total, held = 10_000, 20
	es := make([]runs.Enqueue, 1000)
	for i := range 10 {
		for j := range es {
			es[j] = runs.Enqueue{Queue: "q", Payload: []byte(`{"n":1}`), UniqueKey: fmt.Sprintf("key-%d", i*1000+j)}
		}
		_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
		require.NoError(t, err)
	}
	_, err := d.s.general.Exec(ctx, claimRunsPlain, nil, "q", held, "o", 5*time.Minute)
	require.NoError(t, err)
	var firstHeld int64
	require.NoError(t, d.s.general.QueryRow(ctx, `SELECT min(id) FROM runs WHERE state = 'running'`).Scan(&firstHeld))
	_, err = d.s.general.Exec(ctx, "ANALYZE runs") // as autovacuum's analyze would have it
	require.NoError(t, err)

	for _, generic := range []bool{false, true} {
		tx, err := d.s.general.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx) //nolint:errcheck // the first rollback wins; a failed test must still free the connection
		if generic {
			_, err = tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan")
			require.NoError(t, err)
		}
		qr := pgxQueryRower{q: func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
			return tx.QueryRow(ctx, q, args...)
		}}
		for _, c := range []struct {
			name    string
			p       driver.RunListParams
			maxRows float64
		}{
			{"owner", driver.RunListParams{Owner: "o"}, held},
			{"unique key", driver.RunListParams{UniqueKey: "key-7777"}, 1},
			{"owner, page 2", driver.RunListParams{Owner: "o", AfterID: firstHeld + held/2}, held},
		} {
			q, args := runListQuery(&c.p, 50)
			e := explain(t, ctx, qr, q, args...)
			plan := strings.Join(e.nodes, " > ")
			t.Logf("%s (generic plan %v): %.0f rows of runs read of %d; buffers hit %.0f, read %.0f\n  plan: %s", c.name, generic, e.scanned, total, e.hit, e.read, plan)
			require.NotContains(t, plan, "Seq Scan runs", c.name)
			require.LessOrEqual(t, e.scanned, c.maxRows, "%s reads only its candidates", c.name)
		}
		require.NoError(t, tx.Rollback(ctx))
	}
}
