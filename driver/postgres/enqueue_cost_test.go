package postgres

import (
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"
)

// TestEnqueueStatementCost is a measurement, not a check (it runs only
// with LEASEHOLD_MEASURE=1): the WAL one insertRuns of 100 runs writes
// (EXPLAIN ANALYZE WAL), the bytes its rows send back, and the server CPU
// per run of insertRuns as it is and as it was (RETURNING every column),
// alternated on one backend (/proc/<pid>/schedstat).
func TestEnqueueStatementCost(t *testing.T) {
	if os.Getenv("LEASEHOLD_MEASURE") == "" {
		t.Skip("a measurement: LEASEHOLD_MEASURE=1")
	}
	d := open(t, Config{})
	ctx := t.Context()
	conn, err := d.s.general.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	pid := int(conn.Conn().PgConn().PID())
	wide := strings.Replace(insertRuns, "RETURNING id, created_at, scheduled_at", "RETURNING "+runColumns, 1)
	require.NotEqual(t, wide, insertRuns)
	const n = 100
	qs, ps, pr, ma, de := make([]string, n), make([][]byte, n), make([]int32, n), make([]int32, n), make([]pgtype.Interval, n)
	for i := range qs {
		qs[i], ps[i], ma[i], de[i] = "q", []byte("null"), 25, pgtype.Interval{Valid: true}
	}
	for _, v := range []struct{ name, q string }{{"wide", wide}, {"narrow", insertRuns}} {
		rows, err := conn.Query(ctx, v.q, nil, qs, ps, pr, ma, de)
		require.NoError(t, err)
		wire := 0
		for rows.Next() {
			wire += 7
			for _, c := range rows.RawValues() {
				wire += 4 + len(c)
			}
		}
		require.NoError(t, rows.Err())
		rows, err = conn.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, WAL, COSTS OFF, TIMING OFF) "+v.q, nil, qs, ps, pr, ma, de)
		require.NoError(t, err)
		var lines []string
		for rows.Next() {
			var l string
			require.NoError(t, rows.Scan(&l))
			lines = append(lines, l)
		}
		require.NoError(t, rows.Err())
		t.Logf("%s: %.1f bytes/run sent back\n%s", v.name, float64(wire)/n, strings.Join(lines, "\n"))
	}
	const rounds, iters = 6, 300
	cpu := map[string]int64{}
	for range rounds {
		for _, v := range []struct{ name, q string }{{"wide", wide}, {"narrow", insertRuns}} {
			c0 := backendCPU(pid)
			for range iters {
				rows, err := conn.Query(ctx, v.q, nil, qs, ps, pr, ma, de)
				require.NoError(t, err)
				for rows.Next() {
				}
				require.NoError(t, rows.Err())
			}
			cpu[v.name] += int64(backendCPU(pid) - c0)
		}
		_, err := conn.Exec(ctx, "TRUNCATE runs CASCADE")
		require.NoError(t, err)
	}
	for _, k := range []string{"wide", "narrow"} {
		t.Logf("%s: server CPU %.2f µs/run", k, float64(cpu[k])/1e3/(rounds*iters*n))
	}
}
