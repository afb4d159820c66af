package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// TestRunListFiltersUseIndexes: on SQLite the owner filter reads the
// partial index of running runs (runs_expiry) and the unique-key search
// runs_unique_key — EXPLAIN QUERY PLAN names the index, never a scan of
// the table or a walk of its rowids — on a table of 5,000 runs.
func TestRunListFiltersUseIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "leasehold.db")})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	_, err = d.Migrate(ctx)
	require.NoError(t, err)
	es := make([]runs.Enqueue, 1000)
	for i := range 5 {
		for j := range es {
			es[j] = runs.Enqueue{Queue: "q", Payload: []byte(`{}`), UniqueKey: fmt.Sprintf("key-%d", i*1000+j)}
		}
		_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
		require.NoError(t, err)
	}
	_, err = d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "o", Limit: 20, Lease: time.Minute})
	require.NoError(t, err)
	for _, c := range []struct {
		p     driver.RunListParams
		index string
	}{
		{driver.RunListParams{Owner: "o"}, "runs_expiry"},
		{driver.RunListParams{UniqueKey: "key-4321"}, "runs_unique_key"},
	} {
		rows, err := d.s.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+runListQuery(&c.p), runListArgs(&c.p, 50)...)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
		}
		require.NoError(t, rows.Err())
		got := strings.Join(plan, "; ")
		t.Logf("%+v: %s", c.p, got)
		require.Contains(t, got, "USING INDEX "+c.index, "%+v", c.p)
		require.NotRegexp(t, `SCAN runs($|;)|INTEGER PRIMARY KEY`, got, "%+v: a scan of the table or a walk of its rowids", c.p)
	}
}
