package postgres

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/runs"
)

// backendCPU is the CPU time the server process behind conn has used
// (/proc/<pid>/schedstat, nanoseconds), or -1 where it cannot be read
// (the server on another machine).
func backendCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return -1
	}
	return time.Duration(ns)
}

// TestEventAppendExplained counts what a group-committed batch of run
// events costs the server, in the shape of `leasehold bench events`
// (batches of 1,000 events over 100 held runs): the WAL records and bytes
// per event of appendEvents (EXPLAIN (ANALYZE, BUFFERS, WAL)), and, where
// the server runs on this machine, the backend's CPU per event over
// batches sent as the driver sends them. Counted, not timed: the WAL
// figure holds on a loaded machine.
func TestEventAppendExplained(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(t, Config{})
	const nRuns, batch, rounds = 100, 1000, 40
	es := make([]runs.Enqueue, nRuns)
	for i := range es {
		es[i] = runs.Enqueue{Queue: "q", Payload: []byte(`{"n":1}`)}
	}
	_, err := d.RunEnqueue(ctx, &driver.RunEnqueueParams{Runs: es})
	require.NoError(t, err)
	held, err := d.RunClaim(ctx, &driver.RunClaimParams{Queue: "q", Owner: "o", Limit: nRuns, Lease: time.Hour})
	require.NoError(t, err)
	require.Len(t, held, nRuns)
	seq := make([]int64, nRuns)
	next := func() []driver.RunEventInsert {
		evs := make([]driver.RunEventInsert, batch)
		for i := range evs {
			k := i % nRuns
			seq[k]++
			evs[i] = driver.RunEventInsert{RunID: held[k].ID, Fence: held[k].Fence, Seq: seq[k], Kind: "bench", Payload: []byte(`{"n":1}`)}
		}
		return evs
	}
	conn, err := d.s.general.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	args := func() []any {
		b := eventArrays(next())
		return []any{d.s.fakeNow(), b.distinctRuns, b.runIDs, b.fences, b.seqs, b.kinds, b.payloads, d.s.eventsChannel()}
	}
	// Warm: the statement prepared, the runs' first leaves split.
	for range 5 {
		_, err := conn.Exec(ctx, appendEvents, args()...)
		require.NoError(t, err)
	}
	qr := pgxQueryRower{q: func(ctx context.Context, q string, args ...any) interface{ Scan(...any) error } {
		return conn.QueryRow(ctx, q, args...)
	}}
	var sum explained
	for range rounds {
		e := explain(t, ctx, qr, appendEvents, args()...)
		sum.walRecords += e.walRecords
		sum.walBytes += e.walBytes
		sum.walFPI += e.walFPI
		sum.dirtied += e.dirtied
		sum.hit += e.hit
		sum.execMs += e.execMs
		sum.nodes = e.nodes
	}
	n := float64(rounds * batch)
	var pid int
	require.NoError(t, conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
	cpu0 := backendCPU(pid)
	for range rounds {
		_, err := conn.Exec(ctx, appendEvents, args()...)
		require.NoError(t, err)
	}
	cpu := backendCPU(pid) - cpu0
	var idx []string
	rows, err := conn.Query(ctx, `SELECT indexrelid::regclass::text || ' ' || pg_relation_size(indexrelid) FROM pg_index WHERE indrelid = 'run_events'::regclass ORDER BY 1`)
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		idx = append(idx, s)
	}
	require.NoError(t, rows.Err())
	t.Logf("per event (batches of %d over %d runs): WAL %.2f records, %.0f bytes (%.1f full-page images per batch); buffers dirtied %.3f, hit %.2f; backend CPU %.2f µs (-1: not on this machine)\n  plan: %s\n  index bytes: %s",
		batch, nRuns, sum.walRecords/n, sum.walBytes/n, sum.walFPI/rounds, sum.dirtied/n, sum.hit/n,
		float64(cpu.Nanoseconds())/1e3/n, strings.Join(sum.nodes, " > "), strings.Join(idx, ", "))
	// A heap tuple, a run_events_pkey entry and a run_events_txid entry per
	// event, a row lock per run: 3.1 records, 306 bytes (338 with 0016's
	// four-column order index). The bounds catch a new index or a second
	// write per event, not page splits or a checkpoint's full-page images.
	require.LessOrEqual(t, sum.walRecords/n, 3.3, "WAL records per event")
	require.LessOrEqual(t, sum.walBytes/n, 400.0, "WAL bytes per event")

	// The queue's list from a cursor inside the table seeks the order index
	// and sorts only each (transaction, run) group: no sort of every event
	// after the cursor. Both tables analyzed, as autovacuum leaves them (with
	// runs never analyzed the planner reads every event of the queue through
	// the primary key and sorts them, with 0016's index as with 0019's).
	_, err = conn.Exec(ctx, "ANALYZE runs; ANALYZE run_events")
	require.NoError(t, err)
	var mid struct{ txid, run, fence, seq int64 }
	require.NoError(t, conn.QueryRow(ctx, `SELECT txid::text::bigint, run_id, fence, seq FROM run_events
ORDER BY txid, run_id, fence, seq OFFSET $1 LIMIT 1`, rounds*batch).Scan(&mid.txid, &mid.run, &mid.fence, &mid.seq))
	list := explain(t, ctx, qr, listQueueEvents, "q", strconv.FormatInt(mid.txid, 10), mid.run, mid.fence, mid.seq, 1000)
	plan := strings.Join(list.nodes, " > ")
	t.Logf("list from the middle: %s; %.0f buffers hit", plan, list.hit)
	require.Contains(t, plan, "Incremental Sort", "the list sorts (txid, run_id) groups, not the table")
	require.Contains(t, plan, "Index Scan run_events_txid", "the list seeks the cursor in the order index")
	// 1,411 here: a heap fetch per listed row and its run's, once each; a
	// sort of the queue's every event after the cursor read 85,959.
	require.Less(t, list.hit, float64(5*batch), "a page of 1,000 reads its rows, not the table")
}
